package sessionview_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionview"
)

const head = `{"record":"meta","format":1,"id":"20260805T091500-3f2a1b7c","created_at":"2026-08-05T09:15:00Z","provider":"anthropic","model":"claude-opus-5","workspace":"/w","title":"t"}` + "\n"

func file(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(head+strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func calls(v *sessionview.View) map[string]string {
	out := map[string]string{}
	for _, it := range v.Items {
		if r, ok := it.(*sessionview.Reply); ok {
			for _, c := range r.Calls {
				if c.Result == nil {
					out[c.ID] = "-"
				} else {
					out[c.ID] = c.Result.Content
				}
			}
		}
	}
	return out
}

func orphans(v *sessionview.View) []string {
	var out []string
	for _, it := range v.Items {
		if u, ok := it.(*sessionview.User); ok {
			for _, b := range u.Orphans {
				out = append(out, b.ToolUseID+"="+b.Content)
			}
		}
	}
	return out
}

func TestPairing(t *testing.T) {
	t.Parallel()
	use := func(ids ...string) string {
		var b []string
		for _, id := range ids {
			b = append(b, `{"type":"tool_use","id":"`+id+`","name":"fs_read","input":{}}`)
		}
		return `{"record":"message","role":"assistant","content":[` + strings.Join(b, ",") + `]}`
	}
	results := func(pairs ...string) string {
		var b []string
		for _, p := range pairs {
			id, content, _ := strings.Cut(p, "=")
			b = append(b, `{"type":"tool_result","tool_use_id":"`+id+`","content":"`+content+`"}`)
		}
		return `{"record":"message","role":"user","content":[` + strings.Join(b, ",") + `]}`
	}
	prompt := `{"record":"message","role":"user","content":[{"type":"text","text":"go on"}]}`
	taint := `{"record":"taint","private":true,"untrusted":false}`
	tests := []struct {
		name    string
		lines   []string
		calls   map[string]string
		orphans []string
	}{
		{"parallel calls answered out of order", []string{use("a", "b", "c"), results("c=3", "a=1", "b=2")},
			map[string]string{"a": "1", "b": "2", "c": "3"}, nil},
		{"results split over two messages, records between", []string{use("a", "b"), results("b=2"), taint, results("a=1")},
			map[string]string{"a": "1", "b": "2"}, nil},
		{"a call never answered", []string{use("a", "b"), results("a=1"), prompt, use("c"), results("c=3")},
			map[string]string{"a": "1", "b": "-", "c": "3"}, nil},
		{"an answer after the model's next message answers nothing", []string{use("a"), use("b"), results("a=1", "b=2")},
			map[string]string{"a": "-", "b": "2"}, []string{"a=1"}},
		{"a second result for one call", []string{use("a"), results("a=1", "a=again")},
			map[string]string{"a": "1"}, []string{"a=again"}},
		{"a result before its call", []string{results("a=early"), use("a")},
			map[string]string{"a": "-"}, []string{"a=early"}},
		{"one id called twice is answered twice, in order", []string{use("a", "a"), results("a=1", "a=2")},
			map[string]string{"a": "2"}, nil},
		{"the file ends while a call waits", []string{use("a"), taint},
			map[string]string{"a": "-"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v, err := sessionview.Build(file(t, tt.lines...), nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := calls(v); !reflect.DeepEqual(got, tt.calls) {
				t.Errorf("calls = %v, want %v", got, tt.calls)
			}
			if got := orphans(v); !reflect.DeepEqual(got, tt.orphans) {
				t.Errorf("orphans = %v, want %v", got, tt.orphans)
			}
			// However long a reply is held, items come out in file order.
			last := 0
			for _, it := range v.Items {
				if it.Line() <= last {
					t.Errorf("item of line %d after line %d", it.Line(), last)
				}
				last = it.Line()
			}
			if len(v.Items) != len(tt.lines)+1 {
				t.Errorf("%d items for %d records", len(v.Items), len(tt.lines)+1)
			}
		})
	}
}

// TestOutcomeOfGateMessages classifies the results the permission gate
// really records, so that a change of its wording is caught here.
func TestOutcomeOfGateMessages(t *testing.T) {
	t.Parallel()
	shell := &fakeTool{caps: tool.Capabilities{RunsCommands: true}}
	for _, tt := range []struct {
		mode  tool.Mode
		asker tool.Asker
		want  sessionview.Outcome
	}{
		{tool.ModeReadOnly, nil, sessionview.Refused},
		{tool.Mode("maybe"), nil, sessionview.Refused},
		{tool.ModeAsk, nil, sessionview.Denied},
		{tool.ModeAsk, no{}, sessionview.Denied},
		{tool.ModeYes, nil, sessionview.Succeeded},
	} {
		res, err := tool.Gate(shell, tt.mode, tt.asker).Run(context.Background(), json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		c := sessionview.Call{Result: &sessionview.Result{Content: res.Content, IsError: res.IsError}}
		if got := c.Outcome(); got != tt.want {
			t.Errorf("mode %s: %q is outcome %d, want %d", tt.mode, res.Content, got, tt.want)
		}
	}
	failed := sessionview.Call{Result: &sessionview.Result{Content: "no such file: x", IsError: true}}
	if failed.Outcome() != sessionview.Failed || (sessionview.Call{}).Outcome() != sessionview.Unanswered {
		t.Error("a failure or a missing result misclassified")
	}
}

type fakeTool struct{ caps tool.Capabilities }

func (f *fakeTool) Spec() tool.Spec                 { return tool.Spec{Name: "shell"} }
func (f *fakeTool) Capabilities() tool.Capabilities { return f.caps }
func (f *fakeTool) Run(context.Context, json.RawMessage) (tool.Result, error) {
	return tool.Result{Content: "ran"}, nil
}

type no struct{}

func (no) Confirm(context.Context, tool.Request) (bool, error) { return false, nil }

// TestAgreesWithSession holds the view's taint coverage, usage and skips
// to what the session package computes from a loaded transcript, and Walk
// to Stream.
func TestAgreesWithSession(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		v, err := sessionview.Build(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := session.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(path)
		if got, want := v.Coverage(), s.TaintTimeline(); !reflect.DeepEqual(got, want) && len(want) > 0 {
			t.Errorf("%s: coverage %v, want %v", name, got, want)
		}
		usage, turns := s.UsageTotals()
		tot := v.Totals
		if tot.Usage != usage || tot.Turns != turns || tot.Taint != s.Taint() || tot.Messages != len(s.Messages()) ||
			tot.Skips.Count != s.Skipped || !reflect.DeepEqual(tot.Skips.Lines, s.SkippedLines) {
			t.Errorf("%s: totals %+v disagree with the session", name, tot)
		}
		var walked []sessionview.Item
		s.Path = path
		wt, err := sessionview.Walk(s, nil, func(it sessionview.Item) error { walked = append(walked, it); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if len(walked) != len(v.Items) || !reflect.DeepEqual(wt, tot) {
			t.Errorf("%s: Walk gave %d items and %+v, Stream %d and %+v", name, len(walked), wt, len(v.Items), tot)
		}
		for i := range walked {
			if reflect.TypeOf(walked[i]) != reflect.TypeOf(v.Items[i]) {
				t.Errorf("%s: item %d is %T walked, %T streamed", name, i, walked[i], v.Items[i])
			}
		}
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "other.jsonl")
	os.WriteFile(p, []byte(`{"record":"message","role":"user","content":[]}`+"\n"), 0o600)
	if _, err := sessionview.Build(p, nil); !errors.Is(err, session.ErrNotSession) {
		t.Errorf("Build(not a session) = %v", err)
	}
	stop := errors.New("stop")
	if _, err := sessionview.Stream(file(t, `{"record":"taint","private":true,"untrusted":false}`), nil,
		func(sessionview.Item) error { return stop }); err != stop {
		t.Errorf("Stream = %v, want the function's error", err)
	}
}

// TestOutcomeUnknown: a result a resume made up, marked or in the words of
// older builds, is an unknown outcome, not a failure.
func TestOutcomeUnknown(t *testing.T) {
	t.Parallel()
	use := `{"record":"message","role":"assistant","content":[{"type":"tool_use","id":"a","name":"shell","input":{}},{"type":"tool_use","id":"b","name":"shell","input":{}},{"type":"tool_use","id":"c","name":"shell","input":{}}]}`
	res := `{"record":"message","role":"user","content":[` +
		`{"type":"tool_result","tool_use_id":"a","content":"outcome unknown","is_error":true,"outcome_unknown":true},` +
		`{"type":"tool_result","tool_use_id":"b","content":"not run: the session ended before this call ran","is_error":true},` +
		`{"type":"tool_result","tool_use_id":"c","content":"not run: the session ended before this call ran"}]}`
	v, err := sessionview.Build(file(t, use, res), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]sessionview.Outcome{"a": sessionview.Unknown, "b": sessionview.Unknown, "c": sessionview.Succeeded}
	for _, it := range v.Items {
		if r, ok := it.(*sessionview.Reply); ok {
			for _, c := range r.Calls {
				if got := c.Outcome(); got != want[c.ID] {
					t.Errorf("call %s: outcome %d, want %d", c.ID, got, want[c.ID])
				}
			}
		}
	}
}

func TestInterlockPrefixIsTheInterlocks(t *testing.T) {
	if sessionview.InterlockPrefix != tool.RefusalPrefix {
		t.Errorf("sessionview.InterlockPrefix %q, tool.RefusalPrefix %q", sessionview.InterlockPrefix, tool.RefusalPrefix)
	}
}
