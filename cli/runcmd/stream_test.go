package runcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/transcript"
)

// watched is a run of two responses as OnEvent sees it: commentary and a
// call, then the answer streamed in deltas.
func watched(answerDeltas ...string) []agent.Event {
	call := transcript.ToolUseBlock("c1", "fs_list", json.RawMessage(`{"path":"."}`))
	answer := strings.Join(answerDeltas, "")
	if len(answerDeltas) > 1 && answerDeltas[0] == "RETRY" {
		answer = strings.Join(answerDeltas[1:], "")
	}
	evs := []agent.Event{
		{Kind: agent.EventMessage, Index: 0, Message: &transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("task")}}},
		{Kind: agent.EventDelta, Delta: provider.Delta{Kind: "thinking", Text: "hmm"}},
		{Kind: agent.EventDelta, Delta: provider.Delta{Kind: "text", Text: "Let me "}},
		{Kind: agent.EventDelta, Delta: provider.Delta{Kind: "text", Text: "look."}},
		{Kind: agent.EventTurn, Usage: transcript.Usage{InputTokens: 10, OutputTokens: 5}, StopReason: "tool_use"},
		{Kind: agent.EventMessage, Index: 1, Message: &transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{transcript.TextBlock("Let me look."), call}}},
		{Kind: agent.EventToolStart, Call: &call},
		{Kind: agent.EventToolDone, Call: &call, Result: &tool.Result{Content: "a.txt"}, Took: 1500 * time.Microsecond},
		{Kind: agent.EventMessage, Index: 2, Message: &transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.ToolResultBlock("c1", "a.txt", false)}}},
	}
	for _, d := range answerDeltas {
		if d != "RETRY" {
			evs = append(evs, agent.Event{Kind: agent.EventDelta, Delta: provider.Delta{Kind: "text", Text: d}})
		}
	}
	return append(evs,
		agent.Event{Kind: agent.EventTurn, Usage: transcript.Usage{InputTokens: 30, OutputTokens: 9}, StopReason: "end_turn"},
		agent.Event{Kind: agent.EventMessage, Index: 3, Message: &transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{transcript.TextBlock(answer)}}})
}

func play(t *testing.T, opts *Options, evs []agent.Event, res *agent.Result) (*output, error) {
	t.Helper()
	out := newOutput(opts, pricing.Table{"mock": {"mock-1": {Input: 1, Output: 2}}})
	out.provider, out.model = "mock", "mock-1"
	if f := out.onEvent(); f != nil {
		for _, e := range evs {
			f(e)
		}
	}
	id := "20260101T000000-00000000"
	return out, out.report(&id, res, nil)
}

func TestTerminalStream(t *testing.T) {
	t.Parallel()
	res := &agent.Result{Text: "The answer.", Turns: 2, StopReason: agent.StopEndTurn}
	for _, tc := range []struct {
		name            string
		errTTY          bool
		deltas          []string
		wantOut, wantEr string
	}{
		{"stderr a file: commentary kept there, the answer on stdout once", false, []string{"The ", "answer."},
			"Let me look.\nThe answer.\n", "Let me look.\n"},
		{"stderr a terminal: it showed the commentary already", true, []string{"The ", "answer.\n"},
			"Let me look.\nThe answer.\n", ""},
		{"a retried stream: the recorded answer printed whole", true, []string{"The an", "RETRY", "The ", "answer."},
			"Let me look.\nThe anThe answer.\nThe answer.\n", "the recorded answer follows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			opts := &Options{Env: &cmdkit.Env{Out: &out, Err: &errb, OutTTY: true, ErrTTY: tc.errTTY}}
			if _, err := play(t, opts, watched(tc.deltas...), res); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.wantOut || !strings.Contains(errb.String(), tc.wantEr) || (tc.wantEr == "" && errb.Len() > 0) {
				t.Errorf("stdout %q (want %q)\nstderr %q (want %q)", out.String(), tc.wantOut, errb.String(), tc.wantEr)
			}
		})
	}
}

// TestNoStreamWithoutATerminal is the control: stdout not a terminal, the
// answer is printed once at the end and nothing else reaches stdout; the
// commentary goes to stderr.
func TestNoStreamWithoutATerminal(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	opts := &Options{Env: &cmdkit.Env{Out: &out, Err: &errb}}
	if _, err := play(t, opts, watched("The ", "answer."), &agent.Result{Text: "The answer."}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "The answer.\n" || errb.String() != "Let me look.\n" {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
}

func TestStreamJSON(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	opts := &Options{Env: &cmdkit.Env{Out: &out, OutTTY: true}, StreamJSON: true}
	res := &agent.Result{Text: "The answer.", Turns: 2, StopReason: agent.StopEndTurn, Usage: transcript.Usage{InputTokens: 30, OutputTokens: 9}}
	if _, err := play(t, opts, watched("The ", "answer."), res); err != nil {
		t.Fatal(err)
	}
	var types []string
	var lines []map[string]any
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		types = append(types, m["type"].(string))
		lines = append(lines, m)
	}
	want := "message delta delta delta turn message tool_start tool_done message delta delta turn message result"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("types\n got %s\nwant %s", got, want)
	}
	check := func(i int, key string, want any) {
		t.Helper()
		if got, _ := json.Marshal(lines[i][key]); string(got) != want {
			t.Errorf("line %d %s = %s, want %s", i, key, got, want)
		}
	}
	check(1, "kind", `"thinking"`)
	check(2, "text", `"Let me "`)
	check(4, "usage", `{"cache_read_tokens":0,"cache_write_tokens":0,"input_tokens":10,"output_tokens":5}`)
	check(5, "content", `[{"text":"Let me look.","type":"text"},{"id":"c1","input":{"path":"."},"name":"fs_list","type":"tool_use"}]`)
	check(6, "input", `{"path":"."}`)
	check(7, "content", `"a.txt"`)
	check(7, "is_error", `false`)
	check(7, "duration_ms", `1`)
	check(13, "session", `"20260101T000000-00000000"`)
	check(13, "stop_reason", `"end_turn"`)
	check(13, "cost_usd", `0.000048`)
	check(13, "text", `"The answer."`)
}

// TestStreamJSONResultOfAFailedRun: the result line says how the run
// ended even when it failed, with the error.
func TestStreamJSONResultOfAFailedRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := newOutput(&Options{Env: &cmdkit.Env{Out: &out}, StreamJSON: true}, nil)
	err := o.report(nil, &agent.Result{Turns: 1, StopReason: agent.StopError}, errors.New("provider: 500"))
	if err != nil || out.String() != `{"type":"result","session":null,"text":"","turns":1,"usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0},"stop_reason":"error","cost_usd":null,"error":"provider: 500"}`+"\n" {
		t.Errorf("%v %s", err, out.String())
	}
}

// TestJSONShowsNothingAsItGoes: --json is unchanged, one object at the end.
func TestJSONShowsNothingAsItGoes(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	opts := &Options{Env: &cmdkit.Env{Out: &out, Err: &errb, OutTTY: true}, JSON: true}
	if _, err := play(t, opts, watched("The ", "answer."), &agent.Result{Text: "The answer.", StopReason: "end_turn"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "{\n") || strings.Count(out.String(), "The answer.") != 1 || errb.Len() != 0 {
		t.Errorf("stdout %q stderr %q", out.String(), errb.String())
	}
}

// TestTerminalStreamEscapes: a set-title sequence and a carriage return in
// the model's text reach the terminal made visible (the attack); written to
// a pipe, the answer keeps its bytes (the control).
func TestTerminalStreamEscapes(t *testing.T) {
	t.Parallel()
	const hostile = "ok\x1b]0;pwned\x07\rgone\u009b2J"
	res := &agent.Result{Text: hostile, StopReason: agent.StopEndTurn}
	for _, tty := range []bool{true, false} {
		var out, errb bytes.Buffer
		opts := &Options{Env: &cmdkit.Env{Out: &out, Err: &errb, OutTTY: tty, ErrTTY: tty}}
		if _, err := play(t, opts, watched(hostile), res); err != nil {
			t.Fatal(err)
		}
		got := out.String()
		if tty && (strings.ContainsAny(got, "\x1b\x07\r\u009b") || !strings.HasSuffix(got, `ok\x1b]0;pwned\x07\x0dgone\u009b2J`+"\n")) {
			t.Errorf("terminal: %q", got)
		}
		if !tty && got != hostile+"\n" {
			t.Errorf("pipe: %q", got)
		}
	}
}
