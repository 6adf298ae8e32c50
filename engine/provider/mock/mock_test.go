package mock_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/mock"
	"github.com/mecha-agent/mecha/record/transcript"
)

var listSpec = provider.ToolSpec{Name: "fs_list", Description: "list a directory", InputSchema: json.RawMessage(`{"type":"object"}`)}

func user(blocks ...transcript.Block) transcript.Message {
	return transcript.Message{Role: transcript.RoleUser, Content: blocks}
}

func assistant(blocks ...transcript.Block) transcript.Message {
	return transcript.Message{Role: transcript.RoleAssistant, Content: blocks}
}

func TestDefault(t *testing.T) {
	t.Parallel()
	prompt := user(transcript.TextBlock("what is here?"))
	call := assistant(transcript.TextBlock("Let me look at the workspace."), transcript.ToolUseBlock("call_1", "fs_list", json.RawMessage(`{"path":"."}`)))
	tests := []struct {
		name     string
		req      provider.Request
		wantText string
		wantCall string // the input of the single expected tool call
		wantStop string
	}{
		{
			name:     "asks for fs_list",
			req:      provider.Request{Tools: []provider.ToolSpec{listSpec}, Messages: []transcript.Message{prompt}},
			wantText: "Let me look at the workspace.",
			wantCall: `{"path":"."}`,
			wantStop: provider.StopToolUse,
		},
		{
			name:     "no fs_list offered",
			req:      provider.Request{Messages: []transcript.Message{prompt}},
			wantText: `This is the mock model, which calls no tools here. You said: "what is here?".`,
			wantStop: provider.StopEndTurn,
		},
		{
			name: "summarises lines",
			req: provider.Request{Tools: []provider.ToolSpec{listSpec}, Messages: []transcript.Message{prompt, call,
				user(transcript.ToolResultBlock("call_1", "go.mod\nmain.go\n\ndocs/\n", false))}},
			wantText: "The workspace holds 3 entries: go.mod, main.go, docs/.",
			wantStop: provider.StopEndTurn,
		},
		{
			name: "summarises a JSON listing",
			req: provider.Request{Tools: []provider.ToolSpec{listSpec}, Messages: []transcript.Message{prompt, call,
				user(transcript.ToolResultBlock("call_1", `[{"name":"a.txt"}]`, false))}},
			wantText: "The workspace holds 1 entry: a.txt.",
			wantStop: provider.StopEndTurn,
		},
		{
			name: "empty listing",
			req: provider.Request{Tools: []provider.ToolSpec{listSpec}, Messages: []transcript.Message{prompt, call,
				user(transcript.ToolResultBlock("call_1", "", false))}},
			wantText: "The workspace is empty.",
			wantStop: provider.StopEndTurn,
		},
		{
			name: "failed listing",
			req: provider.Request{Tools: []provider.ToolSpec{listSpec}, Messages: []transcript.Message{prompt, call,
				user(transcript.ToolResultBlock("call_1", "permission denied\nmore", true))}},
			wantText: `I could not list the workspace: "permission denied"`,
			wantStop: provider.StopEndTurn,
		},
		{
			name: "other tool results",
			req: provider.Request{Tools: []provider.ToolSpec{listSpec}, Messages: []transcript.Message{prompt,
				assistant(transcript.ToolUseBlock("x", "fs_read", nil)), user(transcript.ToolResultBlock("x", "data", false))}},
			wantText: "Done: the tools returned 1 result(s).",
			wantStop: provider.StopEndTurn,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var streamed strings.Builder
			tt.req.OnDelta = func(d provider.Delta) { streamed.WriteString(d.Text) }
			resp, err := mock.New(nil).Complete(context.Background(), &tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Content[0].Text; got != tt.wantText {
				t.Errorf("text = %q, want %q", got, tt.wantText)
			}
			if streamed.String() != tt.wantText {
				t.Errorf("streamed %q", streamed.String())
			}
			calls := resp.ToolCalls()
			if tt.wantCall == "" && len(calls) != 0 || tt.wantCall != "" && (len(calls) != 1 || string(calls[0].Input) != tt.wantCall || calls[0].ID != "call_1") {
				t.Errorf("tool calls = %+v, want input %s", calls, tt.wantCall)
			}
			if resp.StopReason != tt.wantStop || resp.Model != mock.DefaultModel {
				t.Errorf("stop, model = %q, %q", resp.StopReason, resp.Model)
			}
			if resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
				t.Errorf("usage = %+v, want non-zero estimates", resp.Usage)
			}
		})
	}
}

func TestDefaultIsDeterministic(t *testing.T) {
	t.Parallel()
	req := &provider.Request{Tools: []provider.ToolSpec{listSpec}, Messages: []transcript.Message{user(transcript.TextBlock("hi"))}}
	a, _ := mock.New(nil).Complete(context.Background(), req)
	b, _ := mock.New(nil).Complete(context.Background(), req)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("two answers differ:\n%s\n%s", ja, jb)
	}
	if a.Usage.InputTokens != uint64(len(`[{"type":"text","text":"hi"}]`)+len("fs_list")+len("list a directory")+len(`{"type":"object"}`))/4 {
		t.Errorf("input tokens = %d", a.Usage.InputTokens)
	}
}

const script = `{"turns": [
  {"text": "Reading.", "tool_calls": [{"name": "fs_read", "input": {"path": "go.mod"}}, {"id": "mine", "name": "fs_list"}]},
  {"error": {"status": 529, "type": "overloaded_error", "message": "Overloaded", "retryable": true, "retry_after_ms": 1500}},
  {"thinking": "hmm", "text": "Done.", "usage": {"input_tokens": 7, "output_tokens": 3, "cache_read_tokens": 2, "cache_write_tokens": 1}, "stop_reason": "max_tokens", "model": "mock-2"}
]}`

func TestScript(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(path, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := mock.LoadScript(path)
	if err != nil {
		t.Fatal(err)
	}
	m := mock.New(s)
	ctx := context.Background()
	prior := []transcript.Message{user(transcript.TextBlock("go")), assistant(transcript.ToolUseBlock("call_1", "fs_list", nil)), user(transcript.ToolResultBlock("call_1", "x", false))}

	r1, err := m.Complete(ctx, &provider.Request{Model: "asked", Messages: prior})
	if err != nil {
		t.Fatal(err)
	}
	calls := r1.ToolCalls()
	if len(calls) != 2 || calls[0].ID != "call_2" || string(calls[0].Input) != `{"path":"go.mod"}` || calls[1].ID != "mine" || string(calls[1].Input) != `{}` {
		t.Errorf("calls = %+v", calls)
	}
	if r1.StopReason != provider.StopToolUse || r1.Model != "asked" || r1.Content[0].Text != "Reading." {
		t.Errorf("turn 1 = %+v", r1)
	}

	_, err = m.Complete(ctx, &provider.Request{})
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Status != 529 || !perr.Retryable || perr.RetryAfter != 1500*time.Millisecond || perr.Type != "overloaded_error" {
		t.Fatalf("turn 2 error = %#v", err)
	}

	r3, err := m.Complete(ctx, &provider.Request{})
	if err != nil {
		t.Fatal(err)
	}
	want := transcript.Usage{InputTokens: 7, OutputTokens: 3, CacheReadTokens: 2, CacheWriteTokens: 1}
	if r3.Usage != want || r3.StopReason != provider.StopMaxTokens || r3.Model != "mock-2" || r3.Content[0].Type != transcript.BlockThinking || r3.Content[1].Text != "Done." {
		t.Errorf("turn 3 = %+v", r3)
	}
	if m.Remaining() != 0 || m.Calls() != 3 {
		t.Errorf("remaining, calls = %d, %d", m.Remaining(), m.Calls())
	}

	_, err = m.Complete(ctx, &provider.Request{})
	if err == nil || err.Error() != "mock: script exhausted: this is model call 4 and the script has 3 turns" {
		t.Errorf("exhausted: %v", err)
	}
}

func TestParseScriptErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`{"turns":[{"txt":"typo"}]}`:                                                 `unknown field "txt"`,
		`{"turns":[{"text":"x","error":{"message":"m"}}]}`:                           "turn 1: an error turn has no text",
		`{"turns":[{"error":{"status":500}}]}`:                                       "turn 1: error without a message",
		`{"turns":[{"stop_reason":"stop"}]}`:                                         `stop_reason "stop"`,
		`{"turns":[{"tool_calls":[{"input":{}}]}]}`:                                  "tool call 1 has no name",
		`{"turns":[{"tool_calls":[{"name":"a","input":[1]}]}]}`:                      "input is not a JSON object",
		`{"turns":[]} {}`:                                                            "text after",
		`{"turns":[{"text":"a"},{"tool_calls":[{"name":"a"}]},{"stop_reason":"x"}]}`: "turn 3",
		`{"turns":[{"text":"a","cut_after":3}]}`:                                     "turn 1: cut_after is not played by the mock provider",
		`{"turns":[{"status":429,"retry_after":"1"}]}`:                               "turn 1: status is not played by the mock provider",
		`{"turns":[{"thinking":"t","signature":"s"}]}`:                               "turn 1: signature is not played by the mock provider",
		`{"turns":[{"tool_calls":[{"name":"a","arguments":"{"}]}]}`:                  "turn 1: tool_calls.arguments is not played by the mock provider",
	}
	for in, want := range tests {
		_, err := mock.ParseScript([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "mock: ") {
			t.Errorf("ParseScript(%s) = %v, want %q", in, err, want)
		}
	}
	if _, err := mock.LoadScript(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.HasPrefix(err.Error(), "mock: ") {
		t.Errorf("LoadScript of a missing file: %v", err)
	}
}

func TestCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := mock.New(nil).Complete(ctx, &provider.Request{}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	if p := provider.Provider(mock.New(nil)); p.Name() != "mock" || p.DefaultModel() != "mock-1" {
		t.Errorf("Name, DefaultModel = %q, %q", p.Name(), p.DefaultModel())
	}
}
