package fakellm

import (
	"encoding/json"
	"strings"
	"testing"
)

// errMessage returns "type: message" of an error body of either wire.
func errMessage(body string) string {
	var v struct {
		Error struct{ Type, Message string }
	}
	if json.Unmarshal([]byte(body), &v) != nil {
		return ""
	}
	return v.Error.Type + ": " + v.Error.Message
}

func TestValidateAnthropic(t *testing.T) {
	t.Parallel()
	const (
		use    = `{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}}]}`
		answer = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"ok"}]}`
		q      = `{"role":"user","content":"q"}`
	)
	msgs := func(m ...string) string { return `"messages":[` + strings.Join(m, ",") + `]` }
	tests := []struct {
		name, body, want string // want "" means accepted
	}{
		{"ok", `{"model":"m","max_tokens":5,` + msgs(q, use, answer) + `}`, ""},
		{"server tools and a paused turn continued", `{"model":"m","max_tokens":5,` + msgs(q, `{"role":"assistant","content":[`+
			`{"type":"server_tool_use","id":"s1","name":"web_search","input":{"query":"x"}},{"type":"web_search_tool_result","tool_use_id":"s1","content":[]},`+
			`{"type":"mcp_tool_use","id":"m1","name":"f","server_name":"srv","input":{}},{"type":"mcp_tool_result","tool_use_id":"m1","content":[]},`+
			`{"type":"server_tool_use","id":"s2","name":"web_search","input":{"query":"y"}}]}`) + `}`, ""},
		{"server result before its use", `{"model":"m","max_tokens":5,` + msgs(q, `{"role":"assistant","content":[`+
			`{"type":"web_search_tool_result","tool_use_id":"s1","content":[]}]}`) + `}`, `answers no server tool use before it`},
		{"server tool use without input", `{"model":"m","max_tokens":5,` + msgs(q, `{"role":"assistant","content":[`+
			`{"type":"server_tool_use","id":"s1","name":"web_search"}]}`) + `}`, `need an id, a name and an input object`},
		{"mcp tool use without its server", `{"model":"m","max_tokens":5,` + msgs(q, `{"role":"assistant","content":[`+
			`{"type":"mcp_tool_use","id":"m1","name":"f","input":{}}]}`) + `}`, `server_name: field required`},
		{"server tool use from the user", `{"model":"m","max_tokens":5,` + msgs(`{"role":"user","content":[`+
			`{"type":"server_tool_use","id":"s1","name":"web_search","input":{}}]}`) + `}`, "only appear in assistant messages"},
		{"not JSON", `{`, "body is not a JSON request"},
		{"no model", `{"max_tokens":5,` + msgs(q) + `}`, "model: field required"},
		{"no max_tokens", `{"model":"m",` + msgs(q) + `}`, "max_tokens: field required"},
		{"no messages", `{"model":"m","max_tokens":5,"messages":[]}`, "at least one message"},
		{"assistant first", `{"model":"m","max_tokens":5,` + msgs(use) + `}`, "first message must use the \"user\" role"},
		{"not alternating", `{"model":"m","max_tokens":5,` + msgs(q, q) + `}`, "messages.1: roles must alternate"},
		{"bad role", `{"model":"m","max_tokens":5,` + msgs(`{"role":"system","content":"x"}`) + `}`, `not "system"`},
		{"empty text", `{"model":"m","max_tokens":5,` + msgs(`{"role":"user","content":[{"type":"text","text":""}]}`) + `}`, "text content blocks must be non-empty"},
		{"unknown block", `{"model":"m","max_tokens":5,` + msgs(`{"role":"user","content":[{"type":"video"}]}`) + `}`, `unknown content block type "video"`},
		{"stray tool_result", `{"model":"m","max_tokens":5,` + msgs(q, `{"role":"assistant","content":"a"}`, answer) + `}`, `unexpected tool_use_id "t1"`},
		{"unanswered tool_use", `{"model":"m","max_tokens":5,` + msgs(q, use, q) + `}`, `tool_use id "t1" has no tool_result`},
		{"tool_use from the user", `{"model":"m","max_tokens":5,` + msgs(`{"role":"user","content":[{"type":"tool_use","id":"t","name":"f","input":{}}]}`) + `}`, "only appear in assistant messages"},
		{"unsigned thinking", `{"model":"m","max_tokens":5,` + msgs(q, `{"role":"assistant","content":[{"type":"thinking","thinking":"x"}]}`) + `}`, "need thinking and a signature"},
		{"tool without schema", `{"model":"m","max_tokens":5,"tools":[{"name":"f"}],` + msgs(q) + `}`, "tools.0.input_schema"},
		{"duplicate tools", `{"model":"m","max_tokens":5,"tools":[{"name":"f","input_schema":{}},{"name":"f","input_schema":{}}],` + msgs(q) + `}`, "unique"},
		{"budget too big", `{"model":"m","max_tokens":2000,"thinking":{"type":"enabled","budget_tokens":2048},` + msgs(q) + `}`, "budget_tokens"},
		{"temperature with thinking", `{"model":"m","max_tokens":4000,"temperature":0.5,"thinking":{"type":"enabled","budget_tokens":2048},` + msgs(q) + `}`, "temperature"},
		{"too many breakpoints", `{"model":"m","max_tokens":5,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],` +
			`"tools":[{"name":"a","input_schema":{},"cache_control":{"type":"ephemeral"}},{"name":"b","input_schema":{},"cache_control":{"type":"ephemeral"}}],` +
			msgs(`{"role":"user","content":[{"type":"text","text":"x","cache_control":{"type":"ephemeral"}},{"type":"text","text":"y","cache_control":{"type":"ephemeral"}}]}`) + `}`, "at most 4 cache_control"},
	}
	s := start(t, `{"turns":[{"text":"accepted"},{"text":"accepted"}]}`, Options{})
	for _, tt := range tests {
		code, got := post(t, s, "/v1/messages", tt.body)
		switch {
		case tt.want == "" && code != 200:
			t.Errorf("%s: refused: %d %s", tt.name, code, got)
		case tt.want != "" && (code != 400 || !strings.HasPrefix(errMessage(got), "invalid_request_error: fakellm: ") || !strings.Contains(errMessage(got), tt.want)):
			t.Errorf("%s: %d %s, want 400 with %q", tt.name, code, got, tt.want)
		}
	}
	req, _ := newRequest(s, "/v1/messages", `{"model":"m","max_tokens":5,`+msgs(q)+`}`)
	req.Header.Del("Anthropic-Version")
	if code, got := do(t, req); code != 400 || errMessage(got) != "invalid_request_error: fakellm: anthropic-version: header required" {
		t.Errorf("no anthropic-version: %d %s", code, got)
	}
}

func TestValidateOpenAI(t *testing.T) {
	t.Parallel()
	const (
		call = `{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
		tool = `{"role":"tool","tool_call_id":"c1","content":"ok"}`
		q    = `{"role":"user","content":"q"}`
	)
	msgs := func(m ...string) string { return `"messages":[` + strings.Join(m, ",") + `]` }
	tests := []struct {
		name, body, want string
	}{
		{"ok", `{"model":"m",` + msgs(`{"role":"system","content":"s"}`, q, call, tool, q) + `}`, ""},
		{"no model", `{` + msgs(q) + `}`, "model: field required"},
		{"no messages", `{"model":"m","messages":[]}`, "at least one message"},
		{"stray tool message", `{"model":"m",` + msgs(q, `{"role":"tool","tool_call_id":"zz","content":"x"}`) + `}`, `tool_call_id "zz" answers no tool call`},
		{"unanswered call", `{"model":"m",` + msgs(q, call, q) + `}`, "missing c1"},
		{"unanswered call at the end", `{"model":"m",` + msgs(q, call) + `}`, "tool calls c1 have no tool message"},
		{"arguments not a string", `{"model":"m",` + msgs(q, `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{}}}]}`) + `}`, "must be a string"},
		{"bad role", `{"model":"m",` + msgs(`{"role":"robot","content":"x"}`) + `}`, `unknown role "robot"`},
		{"user without content", `{"model":"m",` + msgs(`{"role":"user"}`) + `}`, "content: field required"},
		{"stream_options without stream", `{"model":"m","stream_options":{"include_usage":true},` + msgs(q) + `}`, "stream_options"},
		{"both token limits", `{"model":"m","max_tokens":1,"max_completion_tokens":1,` + msgs(q) + `}`, "send one, not both"},
		{"bad tool", `{"model":"m","tools":[{"type":"function","function":{}}],` + msgs(q) + `}`, "tools[0]"},
	}
	s := start(t, `{"turns":[{"text":"accepted"}]}`, Options{})
	for _, tt := range tests {
		code, got := post(t, s, "/v1/chat/completions", tt.body)
		switch {
		case tt.want == "" && code != 200:
			t.Errorf("%s: refused: %d %s", tt.name, code, got)
		case tt.want != "" && (code != 400 || !strings.HasPrefix(errMessage(got), "invalid_request_error: fakellm: ") || !strings.Contains(errMessage(got), tt.want)):
			t.Errorf("%s: %d %s, want 400 with %q", tt.name, code, got, tt.want)
		}
	}
}
