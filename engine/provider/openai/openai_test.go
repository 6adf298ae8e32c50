package openai

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

func local(t *testing.T) *Client {
	t.Helper()
	c, err := New(Options{Name: NameLocal, APIKey: "sk-unit-test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// data renders chunks as a stream.
func data(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

func TestReadStream(t *testing.T) {
	t.Parallel()
	const usage = `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":4,"prompt_tokens_details":{"cached_tokens":6}}}`
	tests := []struct {
		name    string
		stream  string
		want    string // the response's content and stop reason as JSON
		wantErr string
	}{
		{
			name: "every call numbered 0, told apart by id",
			stream: data(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"g","arguments":"{}"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			want: `[{"type":"tool_use","id":"a","name":"f","input":{"x":1}},{"type":"tool_use","id":"b","name":"g","input":{}}] tool_use`,
		},
		{
			name: "no index, no ids, finish stop, Ollama's reasoning",
			stream: data(`{"choices":[{"delta":{"reasoning":"hm"}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{\"p\":"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"2}"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"stop"}]}`, "[DONE]"),
			want: `[{"type":"thinking","thinking":"hm"},{"type":"tool_use","id":"call_1","name":"f","input":{"p":2}}] tool_use`,
		},
		{
			name: "no index, new ids start calls, a repeated name is not doubled",
			stream: data(`{"choices":[{"delta":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{}"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"id":"b","function":{"name":"g","arguments":"{\"q\":true}"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, "[DONE]"),
			want: `[{"type":"tool_use","id":"a","name":"f","input":{}},{"type":"tool_use","id":"b","name":"g","input":{"q":true}}] tool_use`,
		},
		{
			name:   "no [DONE] but finish and usage",
			stream: data(`{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`, usage),
			want:   `[{"type":"text","text":"hi"}] end_turn`,
		},
		{
			name:   "[DONE] without a newline",
			stream: strings.TrimSuffix(data(`{"choices":[{"delta":{"content":"hi"},"finish_reason":"length"}]}`, "[DONE]"), "\n\n"),
			want:   `[{"type":"text","text":"hi"}] max_tokens`,
		},
		{
			name:    "no [DONE], no usage",
			stream:  data(`{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`),
			wantErr: "local: stream ended early (no [DONE])",
		},
		{
			name:    "last chunk cut short",
			stream:  strings.TrimSuffix(data(`{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`, usage), "\n\n"),
			wantErr: "local: stream ended early (no [DONE])",
		},
		{
			name:    "error chunk",
			stream:  "event: error\n" + data(`{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`),
			wantErr: "local: server_error: slot unavailable",
		},
		{
			name:    "unknown finish reason",
			stream:  data(`{"choices":[{"delta":{"content":"x"},"finish_reason":"content_filter"}]}`, "[DONE]"),
			want:    `[{"type":"text","text":"x"}] other`,
			wantErr: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := local(t).readStream(context.Background(), strings.NewReader(tt.stream), nil, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(resp.Content)
			if s := string(got) + " " + resp.StopReason; s != tt.want {
				t.Errorf("response\n got %s\nwant %s", s, tt.want)
			}
		})
	}
}

func TestUnstreamedAnswer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-unit-test" {
			t.Errorf("path, auth = %s, %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write([]byte(`{"model":"m","choices":[{"message":{"content":"hi","reasoning_content":"r","tool_calls":[{"id":"c","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	}))
	defer srv.Close()
	c, _ := New(Options{Name: NameOpenAI, BaseURL: srv.URL, APIKey: "sk-unit-test"})
	resp, err := c.Complete(context.Background(), &provider.Request{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(resp)
	want := `{"Content":[{"type":"thinking","thinking":"r"},{"type":"text","text":"hi"},{"type":"tool_use","id":"c","name":"f","input":{}}],"StopReason":"tool_use","NativeStopReason":"tool_calls","Usage":{"input_tokens":3,"output_tokens":2,"cache_read_tokens":0,"cache_write_tokens":0},"Model":"m"}`
	if string(got) != want {
		t.Errorf("response\n got %s\nwant %s", got, want)
	}
}

func TestWireMessages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		msg  transcript.Message
		want string
	}{
		{
			transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{
				transcript.TextBlock("steer"), transcript.ToolResultBlock("a", "ok", false), transcript.TextBlock("more")}},
			`[{"role":"tool","content":"ok","tool_call_id":"a"},{"role":"user","content":"steer\n\nmore"}]`,
		},
		{
			transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{
				{Type: transcript.BlockThinking, Thinking: "t", Signature: "s"},
				transcript.ToolUseBlock("a", "f", json.RawMessage(`"{broken"`)),
				transcript.ToolUseBlock("b", "f", json.RawMessage(`{ "x" : 1 }`))}},
			`[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{broken"}},` +
				`{"id":"b","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}}]}]`,
		},
		{
			transcript.Message{Role: transcript.RoleAssistant, Content: []transcript.Block{{Type: transcript.BlockThinking, Thinking: "only"}}},
			`null`,
		},
	}
	for _, tt := range tests {
		if got, _ := json.Marshal(wireMessages(tt.msg)); string(got) != tt.want {
			t.Errorf("wireMessages\n got %s\nwant %s", got, tt.want)
		}
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{Name: "azure"}); err == nil || !strings.HasPrefix(err.Error(), "openai: unknown flavour") {
		t.Errorf("unknown flavour: %v", err)
	}
	tests := []struct {
		opts                  Options
		name, model, endpoint string
	}{
		{Options{}, "openai", "gpt-5-mini", "https://api.openai.com/v1/chat/completions"},
		{Options{Name: NameLocal}, "local", "local", "http://127.0.0.1:8080/v1/chat/completions"},
		{Options{Name: NameLocal, BaseURL: "http://h:11434/v1/"}, "local", "local", "http://h:11434/v1/chat/completions"},
	}
	for _, tt := range tests {
		c, err := New(tt.opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.Name() != tt.name || c.DefaultModel() != tt.model || c.endpoint() != tt.endpoint {
			t.Errorf("%+v: %q %q %q", tt.opts, c.Name(), c.DefaultModel(), c.endpoint())
		}
	}
}

// TestProgress: what restarts the idle timeout is a chunk of the answer;
// comments, other fields and empty data lines are not.
func TestProgress(t *testing.T) {
	t.Parallel()
	stream := ": keep-alive\n\n" +
		": OPENROUTER PROCESSING\n\n" +
		"data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n" +
		": keep-alive\n\nid: 3\nretry: 10\n\n" +
		"data:\n\n" +
		"data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n" +
		": keep-alive\n\n" +
		"data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
		"data: [DONE]\n\n"
	n := 0
	if _, err := local(t).readStream(context.Background(), strings.NewReader(stream), func() { n++ }, nil); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Errorf("%d events counted as progress, want 3", n)
	}
}

// TestImagePart: an attached image goes in the user message as an
// image_url content part holding a data URL, after the text part.
func TestImagePart(t *testing.T) {
	t.Parallel()
	c, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	jpeg := []byte("\xff\xd8\xff\xe0fake")
	req := &provider.Request{Messages: []transcript.Message{{Role: transcript.RoleUser, Content: []transcript.Block{
		transcript.TextBlock("what is this?"), transcript.ImageBlock("a.jpg", "image/jpeg", "ab", jpeg)}}}}
	got, err := json.Marshal(c.buildRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	want := `"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},` +
		`{"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4GZha2U="}}]}]`
	if !strings.Contains(string(got), want) {
		t.Errorf("request\n got %s\nwant it to hold %s", got, want)
	}
}
