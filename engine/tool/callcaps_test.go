package tool

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// delegator is a tool whose calls can do what the tools they name can:
// {"tools":["fs_read"]} reads, {"tools":["web_fetch"]} fetches. An input
// it cannot read, or a name it does not know, is an error.
type delegator struct {
	fakeTool
	known map[string]Capabilities
	// whole turns CapabilitiesOf off: the tool is then judged by its
	// Capabilities, the control of each test.
	whole bool
	// judged counts the calls of CapabilitiesOf.
	judged int
}

func newDelegator() *delegator {
	known := map[string]Capabilities{"fs_read": readCaps, "web_fetch": fetchCaps, "fs_write": {ModifiesWorkspace: true}}
	var all Capabilities
	for _, c := range known {
		all = all.Union(c)
	}
	return &delegator{fakeTool: fakeTool{name: "agent", caps: all}, known: known}
}

func (d *delegator) CapabilitiesOf(input json.RawMessage) (Capabilities, error) {
	d.judged++
	if d.whole {
		return d.caps, nil
	}
	var in struct{ Tools []string }
	if err := json.Unmarshal(input, &in); err != nil {
		return Capabilities{}, err
	}
	var c Capabilities
	for _, n := range in.Tools {
		k, ok := d.known[n]
		if !ok {
			return Capabilities{}, errors.New("unknown tool " + n)
		}
		c = c.Union(k)
	}
	return c, nil
}

const (
	readsOnly   = `{"tools":["fs_read"]}`
	fetchesOnly = `{"tools":["web_fetch"]}`
)

func TestCapabilitiesOf(t *testing.T) {
	t.Parallel()
	d := newDelegator()
	for in, want := range map[string]Capabilities{
		readsOnly:                        readCaps,
		fetchesOnly:                      fetchCaps,
		`{"tools":[]}`:                   {},
		`{"tools":["fs_read","nosuch"]}`: d.caps, // unknown name: the union
		`{"tools":`:                      d.caps, // malformed: the union
	} {
		if got := CapabilitiesOf(d, json.RawMessage(in)); got != want {
			t.Errorf("CapabilitiesOf(%s) = %+v, want %+v", in, got, want)
		}
	}
	plain := &fakeTool{name: "fs_read", caps: readCaps}
	if got := CapabilitiesOf(plain, json.RawMessage(readsOnly)); got != readCaps {
		t.Errorf("a tool without call capabilities: %+v", got)
	}
}

// Every decorator forwards the call capabilities, alone and in the stack
// BuildTools builds; a decorator that hid them would make each call be
// judged by the union.
func TestDecoratorsForwardCallCapabilities(t *testing.T) {
	t.Parallel()
	d := newDelegator()
	tr := &Tracker{}
	secrets := []Secret{{Name: "K", Value: "a-long-secret"}}
	for name, tl := range map[string]Tool{
		"Redact":    Redact(d, secrets),
		"Wrap":      tr.Wrap(d),
		"Gate":      Gate(d, ModeReadOnly, nil),
		"Interlock": Interlock(d, TrifectaRefuse, tr, nil),
		"stack":     Interlock(Gate(tr.Wrap(Redact(d, secrets)), ModeYes, nil), TrifectaRefuse, tr, nil),
		"Policy":    Policy{Mode: ModeYes, Secrets: secrets}.Wrap(d, tr),
	} {
		if _, ok := tl.(CallCapabilities); !ok {
			t.Errorf("%s hides CallCapabilities", name)
			continue
		}
		if got := CapabilitiesOf(tl, json.RawMessage(readsOnly)); got != readCaps {
			t.Errorf("%s: CapabilitiesOf = %+v, want %+v", name, got, readCaps)
		}
		if got := CapabilitiesOf(tl, json.RawMessage(`nonsense`)); got != d.caps {
			t.Errorf("%s: malformed input = %+v, want the union", name, got)
		}
		if got := tl.Capabilities(); got != d.caps {
			t.Errorf("%s: Capabilities = %+v, want the union", name, got)
		}
	}
}

func runIn(t *testing.T, tl Tool, input string) Result {
	t.Helper()
	res, err := tl.Run(context.Background(), json.RawMessage(input))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGateJudgesTheCall(t *testing.T) {
	t.Parallel()
	d := newDelegator()
	g := Gate(d, ModeReadOnly, nil)
	if res := runIn(t, g, readsOnly); res.IsError {
		t.Errorf("a read-only call refused in read-only mode: %s", res.Content)
	}
	res := runIn(t, g, fetchesOnly)
	if !res.IsError || !strings.Contains(res.Content, "agent reaches the network and the run is in read-only mode") {
		t.Errorf("a fetching call in read-only mode: %+v", res)
	}
	if res := runIn(t, g, `{"tools":[`); !res.IsError || !strings.Contains(res.Content, "modifies the workspace") {
		t.Errorf("a malformed call is judged by the union: %+v", res)
	}
	// The asker is asked about the call's capabilities.
	a := &fakeAsker{allow: true}
	runIn(t, Gate(d, ModeAsk, a), fetchesOnly)
	if len(a.asked) != 1 || a.asked[0].Capabilities != fetchCaps {
		t.Errorf("asked %+v", a.asked)
	}
	// Control: judged by the union, the same read-only call is refused.
	d.whole = true
	if res := runIn(t, g, readsOnly); !res.IsError {
		t.Errorf("control: judged by the union, a read-only call ran in read-only mode")
	}
	if d.runs != 2 {
		t.Errorf("ran %d times, want 2", d.runs)
	}
}

func TestTrackerCountsTheCall(t *testing.T) {
	t.Parallel()
	d := newDelegator()
	tr := &Tracker{}
	runIn(t, tr.Wrap(d), readsOnly)
	if got := tr.Taint(); got != (transcript.Taint{Private: true}) {
		t.Errorf("a reading call: taint %+v, want private only", got)
	}
	tr = &Tracker{}
	runIn(t, tr.Wrap(d), `{"tools":["nosuch"]}`)
	if got := tr.Taint(); got != (transcript.Taint{Private: true, Untrusted: true}) {
		t.Errorf("an unjudgeable call: taint %+v, want the union's", got)
	}
	// Control: judged by the union, a reading call makes it untrusted too.
	d.whole = true
	tr = &Tracker{}
	runIn(t, tr.Wrap(d), readsOnly)
	if !tr.Taint().Untrusted {
		t.Errorf("control: judged by the union, the call left the conversation trusted")
	}
}

func TestInterlockJudgesTheCall(t *testing.T) {
	t.Parallel()
	d := newDelegator()
	tr := &Tracker{}
	tr.Start(transcript.Taint{Private: true, Untrusted: true}, "an earlier run")
	l := Interlock(d, TrifectaRefuse, tr, nil)
	if res := runIn(t, l, readsOnly); res.IsError {
		t.Errorf("armed, a call that cannot leak was refused: %s", res.Content)
	}
	res := runIn(t, l, fetchesOnly)
	if !res.IsError || !strings.HasPrefix(res.Content, RefusalPrefix) || !strings.Contains(res.Content, "agent could send it out: it reaches the network") {
		t.Errorf("armed, a fetching call: %+v", res)
	}
	if res := runIn(t, l, `[]`); !res.IsError {
		t.Errorf("armed, a malformed call ran")
	}
	// Control: judged by the union, the call that cannot leak is refused.
	d.whole = true
	if res := runIn(t, l, readsOnly); !res.IsError {
		t.Errorf("control: judged by the union, the reading call ran")
	}
	if d.runs != 1 {
		t.Errorf("ran %d times, want 1", d.runs)
	}
}

// A flow-back replaces the reason the delegating call gave at entry: a
// later refusal names where the taint really came from.
func TestAbsorbRefinesTheCallsReason(t *testing.T) {
	t.Parallel()
	d := newDelegator()
	tr := &Tracker{}
	runIn(t, tr.Wrap(d), fetchesOnly)
	if got := tr.State().UntrustedBy; got != "agent brought in content from outside" {
		t.Fatalf("at entry: %q", got)
	}
	tr.Absorb(transcript.Taint{Untrusted: true}, "", "the child: web_fetch brought in content from outside", "agent")
	if got := tr.State().UntrustedBy; got != "the child: web_fetch brought in content from outside" {
		t.Errorf("after the flow-back: %q", got)
	}
	// Control: a reason another tool gave stays.
	tr = &Tracker{}
	runIn(t, tr.Wrap(&fakeTool{name: "web_fetch", caps: fetchCaps}), `{}`)
	tr.Absorb(transcript.Taint{Untrusted: true}, "", "the child: x", "agent")
	if got := tr.State().UntrustedBy; got != "web_fetch brought in content from outside" {
		t.Errorf("a reason of another tool replaced: %q", got)
	}
}

// foreign is a decorator of another package: it forwards the call
// capabilities but hands only the input down, as a layer here did to the
// next before a call's judgement was handed down.
type foreign struct{ Tool }

func (f foreign) CapabilitiesOf(input json.RawMessage) (Capabilities, error) {
	return CapabilitiesOf(f.Tool, input), nil
}

// A call's capabilities are asked for once, by the outermost layer, and
// handed down: the interlock, the gate and the tracker read that one
// judgement, whatever each decides. Control: with a foreign decorator
// between the layers, each layer beneath it asks again (three times a
// call, as each layer used to).
func TestCallJudgedOnce(t *testing.T) {
	t.Parallel()
	armed := transcript.Taint{Private: true, Untrusted: true}
	stack := func(d *delegator, tr *Tracker, mode Mode, asker Asker, between func(Tool) Tool) Tool {
		return Interlock(between(Gate(between(tr.Wrap(d)), mode, asker)), TrifectaRefuse, tr, asker)
	}
	same := func(t Tool) Tool { return t }
	for _, tt := range []struct {
		name  string
		mode  Mode
		taint transcript.Taint
		input string
		runs  int
	}{
		{"runs past every layer", ModeYes, armed, readsOnly, 1},
		{"refused by the interlock", ModeYes, armed, fetchesOnly, 0},
		{"asked about by the gate", ModeAsk, transcript.Taint{}, fetchesOnly, 1},
		{"denied by the gate", ModeReadOnly, transcript.Taint{}, fetchesOnly, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newDelegator()
			tr := &Tracker{}
			tr.Start(tt.taint, "an earlier run")
			runIn(t, stack(d, tr, tt.mode, &fakeAsker{allow: true}, same), tt.input)
			if d.judged != 1 || d.runs != tt.runs {
				t.Errorf("judged %d times, ran %d; want 1, %d", d.judged, d.runs, tt.runs)
			}
		})
	}
	// Control: the judgement is not handed past a foreign decorator.
	d := newDelegator()
	runIn(t, stack(d, &Tracker{}, ModeYes, nil, func(t Tool) Tool { return foreign{t} }), readsOnly)
	if d.judged != 3 || d.runs != 1 {
		t.Errorf("control: judged %d times, ran %d; want 3, 1", d.judged, d.runs)
	}
}
