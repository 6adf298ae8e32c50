package providertest

import (
	"encoding/json"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// conversation is a request after two parallel tool calls, one failed.
func conversation() *provider.Request {
	return &provider.Request{
		Model:     "test-model",
		System:    "You are terse.",
		MaxTokens: 1000,
		Tools: []provider.ToolSpec{
			{Name: "fs_list", Description: "list a directory", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
			{Name: "fs_read", Description: "read a file", InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		},
		Messages: []transcript.Message{
			{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("read go.mod and x")}},
			{Role: transcript.RoleAssistant, Content: []transcript.Block{
				{Type: transcript.BlockThinking, Thinking: "two reads", Signature: "sig"},
				transcript.TextBlock("Reading."),
				transcript.ToolUseBlock("call_a", "fs_read", json.RawMessage(`{"path": "go.mod"}`)),
				transcript.ToolUseBlock("call_b", "fs_read", json.RawMessage(`{"path":"x"}`)),
			}},
			{Role: transcript.RoleUser, Content: []transcript.Block{
				transcript.ToolResultBlock("call_a", "module x", false),
				transcript.ToolResultBlock("call_b", "no such file", true),
			}},
		},
	}
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	temp, seed := 0.25, uint64(42)
	variants := []struct {
		name string
		set  func(r *provider.Request)
	}{
		{"defaults", func(r *provider.Request) {}},
		{"pinned and cached", func(r *provider.Request) {
			r.Temperature, r.Seed, r.CachePrompt, r.Effort = &temp, &seed, true, "low"
		}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			forEach(t, func(t *testing.T, f flavour) {
				p, srv := f.start(t, `{"turns":[{"text":"ok"}]}`)
				req := conversation()
				v.set(req)
				if _, _, err := ask(p, req); err != nil {
					t.Fatal(err) // the fake refuses a request of the wrong shape
				}
				b := body(t, srv, 0)
				check := func(what string, got, want any) {
					t.Helper()
					if g, _ := json.Marshal(got); string(g) != mustJSON(want) {
						t.Errorf("%s = %s, want %s", what, g, mustJSON(want))
					}
				}
				check("model", b["model"], "test-model")
				check("stream", b["stream"], true)
				check("temperature", b["temperature"], map[bool]any{true: 0.25}[req.Temperature != nil])
				if f.wire == "anthropic" {
					checkAnthropic(t, check, b, req, srv.Requests()[0])
				} else {
					checkOpenAI(t, check, b, req, f)
				}
			})
		})
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func checkAnthropic(t *testing.T, check func(string, any, any), b map[string]any, req *provider.Request, r fakellm.Request) {
	check("x-api-key", r.Header.Get("X-Api-Key"), testKey)
	check("anthropic-version", r.Header.Get("Anthropic-Version"), "2023-06-01")
	check("max_tokens", b["max_tokens"], 1000)
	check("seed", b["seed"], nil) // the API has none
	check("thinking", b["thinking"], nil)
	check("tool 0", path(b, "tools", 0), map[string]any{"name": "fs_list", "description": "list a directory",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}})
	check("thinking sent back", path(b, "messages", 1, "content", 0), map[string]any{"type": "thinking", "thinking": "two reads", "signature": "sig"})
	check("tool_use", path(b, "messages", 1, "content", 2), map[string]any{"type": "tool_use", "id": "call_a", "name": "fs_read", "input": map[string]any{"path": "go.mod"}})
	check("first result", path(b, "messages", 2, "content", 0, "tool_use_id"), "call_a")
	check("first result is_error", path(b, "messages", 2, "content", 0, "is_error"), nil)
	check("second result is_error", path(b, "messages", 2, "content", 1, "is_error"), true)
	check("second result content", path(b, "messages", 2, "content", 1, "content"), "no such file")
	ephemeral := map[string]any{"type": "ephemeral"}
	if req.CachePrompt {
		check("system", b["system"], []any{map[string]any{"type": "text", "text": "You are terse.", "cache_control": ephemeral}})
		check("tool 0 cache_control", path(b, "tools", 0, "cache_control"), nil)
		check("last tool cache_control", path(b, "tools", 1, "cache_control"), ephemeral)
		check("last block cache_control", path(b, "messages", 2, "content", 1, "cache_control"), ephemeral)
		check("earlier block cache_control", path(b, "messages", 2, "content", 0, "cache_control"), nil)
	} else {
		check("system", b["system"], "You are terse.")
		check("last block cache_control", path(b, "messages", 2, "content", 1, "cache_control"), nil)
	}
}

func checkOpenAI(t *testing.T, check func(string, any, any), b map[string]any, req *provider.Request, f flavour) {
	check("seed", b["seed"], map[bool]any{true: 42}[req.Seed != nil])
	check("stream_options", b["stream_options"], map[string]any{"include_usage": true})
	check("reasoning_effort", b["reasoning_effort"], map[bool]any{true: "low"}[req.Effort != ""])
	if f.provider == "local" {
		check("max_tokens", b["max_tokens"], 1000)
		check("max_completion_tokens", b["max_completion_tokens"], nil)
		check("cache_prompt", b["cache_prompt"], req.CachePrompt)
	} else {
		check("max_completion_tokens", b["max_completion_tokens"], 1000)
		check("max_tokens", b["max_tokens"], nil)
		check("cache_prompt", b["cache_prompt"], nil)
	}
	check("tool 1", path(b, "tools", 1), map[string]any{"type": "function", "function": map[string]any{"name": "fs_read", "description": "read a file",
		"parameters": map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}}}})
	check("system", path(b, "messages", 0), map[string]any{"role": "system", "content": "You are terse."})
	check("user", path(b, "messages", 1), map[string]any{"role": "user", "content": "read go.mod and x"})
	check("assistant", path(b, "messages", 2), map[string]any{"role": "assistant", "content": "Reading.", "tool_calls": []any{
		map[string]any{"id": "call_a", "type": "function", "function": map[string]any{"name": "fs_read", "arguments": `{"path":"go.mod"}`}},
		map[string]any{"id": "call_b", "type": "function", "function": map[string]any{"name": "fs_read", "arguments": `{"path":"x"}`}},
	}})
	check("first result", path(b, "messages", 3), map[string]any{"role": "tool", "tool_call_id": "call_a", "content": "module x"})
	check("second result", path(b, "messages", 4), map[string]any{"role": "tool", "tool_call_id": "call_b", "content": "error: no such file"})
	check("message count", len(b["messages"].([]any)), 5)
}

// TestThinkingRequest checks the thinking budget and max_tokens raise.
func TestThinkingRequest(t *testing.T) {
	t.Parallel()
	tests := []struct {
		effort          string
		maxTokens       int
		budget, wantMax int
	}{
		{"low", 1000, 2048, 3048},
		{"", 0, 8192, 8192 + 4096},
		{"medium", 20000, 8192, 20000},
		{"high", 1000, 24576, 25576},
	}
	f := flavours()[0]
	for _, tt := range tests {
		t.Run(tt.effort, func(t *testing.T) {
			t.Parallel()
			p, srv := f.start(t, `{"turns":[{"text":"ok"}]}`)
			req := &provider.Request{Model: "m", Thinking: true, Effort: tt.effort, MaxTokens: tt.maxTokens,
				Messages: []transcript.Message{{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("q")}}}}
			if _, _, err := ask(p, req); err != nil {
				t.Fatal(err)
			}
			b := body(t, srv, 0)
			if got := mustJSON(b["thinking"]); got != mustJSON(map[string]any{"type": "enabled", "budget_tokens": tt.budget}) {
				t.Errorf("thinking = %s", got)
			}
			if got := b["max_tokens"]; got != float64(tt.wantMax) {
				t.Errorf("max_tokens = %v, want %d", got, tt.wantMax)
			}
		})
	}
}
