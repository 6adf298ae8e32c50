package agent

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

// native answers with text and the given stop reasons.
func native(text, stop, nativeStop string) func(*provider.Request) (*provider.Response, error) {
	return func(*provider.Request) (*provider.Response, error) {
		return &provider.Response{Content: []transcript.Block{transcript.TextBlock(text)}, StopReason: stop,
			NativeStopReason: nativeStop, Usage: u(1, 1)}, nil
	}
}

// TestStopReasonRecorded: each assistant message carries the model's own
// stop reason; a user message carries none.
func TestStopReasonRecorded(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		func(*provider.Request) (*provider.Response, error) {
			return &provider.Response{Content: []transcript.Block{use("c1", "fast", `{}`)}, StopReason: provider.StopToolUse,
				NativeStopReason: "tool_use"}, nil
		},
		native("I cannot help with that.", provider.StopOther, "refusal"),
	}}
	opts, rec := setup(t, p, transcript.Config{}, &fakeTool{name: "fast"})
	res, err := Run(context.Background(), opts, "go")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rec.recs {
		if m, ok := r.(*transcript.Message); ok {
			got = append(got, m.Role+":"+m.StopReason)
		}
	}
	if want := "user: assistant:tool_use user: assistant:refusal"; strings.Join(got, " ") != want {
		t.Errorf("messages = %s, want %s", strings.Join(got, " "), want)
	}
	if res.StopReason != StopEndTurn {
		t.Errorf("run stop = %q", res.StopReason)
	}
}

// paused answers with a server tool block and a paused turn.
func paused(text string) func(*provider.Request) (*provider.Response, error) {
	return func(*provider.Request) (*provider.Response, error) {
		return &provider.Response{Content: []transcript.Block{transcript.TextBlock(text),
			{Type: "server_tool_use", Raw: json.RawMessage(`{"type":"server_tool_use","id":"s1","name":"web_search","input":{"query":"q"}}`)}},
			StopReason: provider.StopPauseTurn, NativeStopReason: "pause_turn", Usage: u(5, 5)}, nil
	}
}

// TestPausedTurnContinues: a paused answer is recorded and sent back as
// it is, last in the conversation, and the model's continuation recorded
// after it; the run ends as the continuation does.
func TestPausedTurnContinues(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		paused("Searching."),
		native("Found it.", provider.StopEndTurn, "end_turn"),
	}}
	opts, rec := setup(t, p, transcript.Config{})
	res, err := Run(context.Background(), opts, "look it up")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "Found it." || res.Turns != 2 || res.StopReason != StopEndTurn || res.Usage != u(6, 6) {
		t.Errorf("result = %+v", res)
	}
	if got := rec.kinds(); got != "user,assistant,assistant,taint,summary" {
		t.Errorf("records = %s", got)
	}
	first := rec.recs[1].(*transcript.Message)
	if first.StopReason != "pause_turn" || rec.recs[2].(*transcript.Message).StopReason != "end_turn" {
		t.Errorf("stop reasons = %q, %q", first.StopReason, rec.recs[2].(*transcript.Message).StopReason)
	}
	cont := p.reqs[1].Messages
	if len(cont) != 2 || cont[1].Role != transcript.RoleAssistant || !reflect.DeepEqual(cont[1].Content, first.Content) {
		t.Errorf("the continuation was asked with %+v, want the paused answer last", cont)
	}
	if sum := rec.recs[4].(*transcript.Summary); sum.StopReason != StopEndTurn || sum.Turns != 2 {
		t.Errorf("summary = %+v", sum)
	}
}

// TestPausesBounded: a model that keeps pausing is continued MaxPauses
// times, then the run ends, saying so; --max-turns counts continuations.
func TestPausesBounded(t *testing.T) {
	t.Parallel()
	var steps []func(*provider.Request) (*provider.Response, error)
	for range MaxPauses + 1 {
		steps = append(steps, paused("More."))
	}
	p := &scripted{steps: steps}
	opts, rec := setup(t, p, transcript.Config{})
	res, err := Run(context.Background(), opts, "go")
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopPaused || res.Turns != MaxPauses+1 || res.Text != "More." {
		t.Errorf("result = %+v", res)
	}
	if sum := rec.recs[len(rec.recs)-1].(*transcript.Summary); sum.StopReason != StopPaused {
		t.Errorf("summary = %+v", sum)
	}

	p = &scripted{steps: []func(*provider.Request) (*provider.Response, error){paused("a"), paused("b")}}
	opts, _ = setup(t, p, transcript.Config{MaxTurns: 2})
	if res, err := Run(context.Background(), opts, "go"); err != nil || res.StopReason != StopMaxTurns || res.Turns != 2 {
		t.Errorf("max turns: %+v, %v", res, err)
	}
}

// TestPausedWithCalls: a paused answer that also calls tools is answered
// like any other: the results go back, not the bare answer.
func TestPausedWithCalls(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		func(*provider.Request) (*provider.Response, error) {
			return &provider.Response{Content: []transcript.Block{use("c1", "fast", `{}`)}, StopReason: provider.StopPauseTurn}, nil
		},
		answer("done", u(1, 1)),
	}}
	opts, rec := setup(t, p, transcript.Config{}, &fakeTool{name: "fast"})
	if res, err := Run(context.Background(), opts, "go"); err != nil || res.Text != "done" {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := rec.kinds(); got != "user,assistant,user,assistant,taint,summary" {
		t.Errorf("records = %s", got)
	}
}
