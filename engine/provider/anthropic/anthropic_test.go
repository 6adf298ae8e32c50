package anthropic

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

func TestReadStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		stream  string
		want    string // the response as JSON
		wantErr string
	}{
		{
			name: "CRLF, comments, multi-line data, unknown events",
			stream: ": hello\r\nevent: message_start\r\ndata: {\"type\":\"message_start\",\r\ndata: \"message\":{\"model\":\"m\",\"usage\":{\"input_tokens\":5,\"cache_read_input_tokens\":2}}}\r\n\r\n" +
				"event: future_event\ndata: {\"type\":\"future_event\"}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t1\",\"name\":\"f\",\"input\":{}}}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
				"data: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"server_tool_use\",\"id\":\"s1\"}}\n\n" +
				"data: {\"type\":\"content_block_stop\",\"index\":1}\n\n" +
				"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"model_context_window_exceeded\"},\"usage\":{\"output_tokens\":3,\"input_tokens\":6}}\n\n" +
				"data: {\"type\":\"message_stop\"}\n\n",
			want: `{"Content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"server_tool_use","id":"s1"}],"StopReason":"other","NativeStopReason":"model_context_window_exceeded",` +
				`"Usage":{"input_tokens":6,"output_tokens":3,"cache_read_tokens":2,"cache_write_tokens":0},"Model":"m"}`,
		},
		{
			name:    "event cut short at the end",
			stream:  "data: {\"type\":\"message_start\",\"message\":{}}\n\ndata: {\"type\":\"message_stop\"}",
			wantErr: "anthropic: stream ended early (no message_stop)",
		},
		{
			name:    "delta for an unknown block",
			stream:  "data: {\"type\":\"content_block_delta\",\"index\":4,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
			wantErr: "anthropic: malformed stream: delta for unknown block 4",
		},
		{
			name:    "malformed data",
			stream:  "event: ping\ndata: {\"type\": pong}\n\n",
			wantErr: `anthropic: malformed ping event "{\"type\": pong}": invalid character 'p' looking for beginning of value`,
		},
		{
			name:    "error event without details",
			stream:  "event: error\ndata: {\"type\":\"error\"}\n\n",
			wantErr: "anthropic: error event in the stream",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := New(Options{APIKey: "sk-unit-test"})
			resp, err := c.readStream(context.Background(), strings.NewReader(tt.stream), nil, nil)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := json.Marshal(resp); string(got) != tt.want {
				t.Errorf("response\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestUnstreamedAnswer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/messages" {
			t.Errorf("path = %s", r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2,"cache_creation_input_tokens":3}}`))
	}))
	defer srv.Close()
	resp, err := New(Options{BaseURL: srv.URL + "/v1", APIKey: "sk-unit-test"}).Complete(context.Background(), &provider.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content[0].Text != "hi" || resp.StopReason != provider.StopEndTurn || resp.Usage != (transcript.Usage{InputTokens: 1, OutputTokens: 2, CacheWriteTokens: 3}) {
		t.Errorf("response = %+v", resp)
	}
}

func TestWireMessages(t *testing.T) {
	t.Parallel()
	msgs := []transcript.Message{
		{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("a"), transcript.TextBlock("")}},
		{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("b")}},
		{Role: transcript.RoleAssistant, Content: []transcript.Block{
			{Type: transcript.BlockThinking, Thinking: "unsigned, from elsewhere"},
			transcript.ToolUseBlock("t1", "f", json.RawMessage(`"not an object"`)),
			transcript.ToolUseBlock("t2", "f", nil),
			{Type: "redacted_thinking", Raw: json.RawMessage(`{"type":"redacted_thinking","data":"z"}`)},
		}},
		{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("")}},
		{Role: transcript.RoleAssistant, Content: []transcript.Block{transcript.TextBlock("c")}},
	}
	got, err := json.Marshal(wireMessages(msgs))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":{}},{"type":"tool_use","id":"t2","name":"f","input":{}},` +
		`{"type":"redacted_thinking","data":"z"},{"type":"text","text":"c"}]}]`
	if string(got) != want {
		t.Errorf("wire messages\n got %s\nwant %s", got, want)
	}
	if got, _ := json.Marshal(wireMessages(nil)); string(got) != `[]` {
		t.Errorf("no messages: %s", got)
	}
}

func TestEndpoint(t *testing.T) {
	t.Parallel()
	for base, want := range map[string]string{
		"":                       "https://api.anthropic.com/v1/messages",
		"http://proxy/":          "http://proxy/v1/messages",
		"http://proxy/v1":        "http://proxy/v1/messages",
		"http://proxy/anthropic": "http://proxy/anthropic/v1/messages",
	} {
		if got := New(Options{BaseURL: base}).endpoint(); got != want {
			t.Errorf("endpoint(%q) = %q, want %q", base, got, want)
		}
	}
	c := New(Options{})
	if c.Name() != "anthropic" || c.DefaultModel() != "claude-sonnet-4-5" {
		t.Errorf("Name, DefaultModel = %q, %q", c.Name(), c.DefaultModel())
	}
	if w := buildRequest(&provider.Request{}); w.Model != DefaultModel || w.MaxTokens != DefaultMaxTokens || !w.Stream || w.Messages == nil {
		t.Errorf("defaults: %+v", w)
	}
}

// TestProgress: what restarts the idle timeout is an event of the answer;
// comments, pings and events without data are not.
func TestProgress(t *testing.T) {
	t.Parallel()
	stream := ": keep-alive\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"m\"}}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		": keep-alive\n\n" +
		"event: ping\n\n" +
		"data: \n\n" +
		"data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
		"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
		"data: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
		"data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}}\n\n" +
		"data: {\"type\":\"message_stop\"}\n\n"
	n := 0
	c := New(Options{APIKey: "sk-unit-test"})
	if _, err := c.readStream(context.Background(), strings.NewReader(stream), func() { n++ }, nil); err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Errorf("%d events counted as progress, want 6", n)
	}
}

func TestSetField(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{`{"type":"server_tool_use","id":"s","name":"web_search","input":{},"x":[1, 2]}`, `{"type":"server_tool_use","id":"s","name":"web_search","input":{"q":1},"x":[1, 2]}`},
		{`{"type":"t"}`, `{"type":"t","input":{"q":1}}`},
		{` { "a" : "<&>" , "input" : null } `, `{"a":"<&>","input":{"q":1}}`},
		{`[]`, ``},
		{`{"a":`, ``},
	} {
		got, err := setField(json.RawMessage(tt.in), "input", json.RawMessage(`{"q":1}`))
		if string(got) != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("setField(%s) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
	}
}

// TestImageBlock: an attached image goes in the user message as a base64
// image block of its media type; one whose bytes were not loaded is not
// sent as an empty image.
func TestImageBlock(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\nfake")
	req := &provider.Request{Messages: []transcript.Message{{Role: transcript.RoleUser, Content: []transcript.Block{
		transcript.TextBlock("what is this?"), transcript.ImageBlock("a.png", "image/png", "ab", png)}}}}
	got, err := json.Marshal(buildRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	want := `"messages":[{"role":"user","content":[{"type":"text","text":"what is this?"},` +
		`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgpmYWtl"}}]}]`
	if !strings.Contains(string(got), want) {
		t.Errorf("request\n got %s\nwant it to hold %s", got, want)
	}
	req.Messages[0].Content[1].Data = nil
	if got, _ := json.Marshal(buildRequest(req)); strings.Contains(string(got), `"image"`) {
		t.Errorf("image without bytes sent: %s", got)
	}
}
