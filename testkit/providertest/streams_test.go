package providertest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

// streamDir holds streams written here after the shapes real servers
// send. Each file says, in its first lines (SSE comments), which public
// recording or document it follows; README.md lists them.
var streamDir = filepath.Join("testdata", "streams")

// shape is one way real servers answer, played byte for byte.
type shape struct {
	name string
	file string // in streamDir
	wire string // "anthropic" or "openai"
	// content is the response's content as JSON; stop and native its
	// neutral and native stop reasons; deltas what OnDelta saw.
	content      string
	stop, native string
	deltas       string
	// sentBack: the blocks, recorded and read back, are sent again as
	// they were (checked by TestRecordedBlocksSentBack).
	sentBack bool
	// text, when set, is the answer's text as --json and the run's
	// result give it (transcript.TextOf).
	text string
	// skipped counts the parts the client did not keep, by type.
	skipped map[string]int
}

// shapes is the conformance table: one row per shape.
var shapes = []shape{
	{
		name: "server_tool_use streams its input", file: "anthropic_web_search.sse", wire: "anthropic",
		content: `[{"type":"text","text":"Let me look that up."},` +
			`{"type":"server_tool_use","id":"srvtoolu_mecha_01","name":"web_search","input":{"query":"tide tables Brest"}},` +
			`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_mecha_01","content":[{"type":"web_search_result","title":"Brest tides","url":"https://tides.example/brest","encrypted_content":"RW5jcnlwdGVkIGZvciBtZWNoYQ==","page_age":"2 days ago"}]},` +
			`{"type":"text","text":"High tide is at 14:02."}]`,
		stop: provider.StopEndTurn, native: "end_turn", deltas: "text:Let me look that up.|text:High tide is at 14:02.|", sentBack: true,
	},
	{
		name: "mcp_tool_use streams its input", file: "anthropic_mcp_tool_use.sse", wire: "anthropic",
		content: `[{"type":"mcp_tool_use","id":"mcptoolu_mecha_01","name":"search_issues","input":{"query":"stream bug","limit":3},"server_name":"tracker"},` +
			`{"type":"mcp_tool_result","tool_use_id":"mcptoolu_mecha_01","is_error":false,"content":[{"type":"text","text":"{\"total\":1,\"items\":[{\"number\":21}]}"}]},` +
			`{"type":"text","text":"One issue matches: #21."}]`,
		stop: provider.StopEndTurn, native: "end_turn", deltas: "text:One issue matches: #21.|", sentBack: true,
	},
	{
		name: "code execution's server_tool_use streams its command", file: "anthropic_code_execution.sse", wire: "anthropic",
		content: `[{"type":"server_tool_use","id":"srvtoolu_mecha_02","name":"bash_code_execution","input":{"command":"echo \"2^10\" | bc"}},` +
			`{"type":"bash_code_execution_tool_result","tool_use_id":"srvtoolu_mecha_02","content":{"type":"bash_code_execution_result","stdout":"1024\n","stderr":"","return_code":0,"content":[]}},` +
			`{"type":"text","text":"It is 1024."}]`,
		stop: provider.StopEndTurn, native: "end_turn", deltas: "text:It is 1024.|", sentBack: true,
	},
	{
		name: "pause_turn", file: "anthropic_pause_turn.sse", wire: "anthropic",
		content: `[{"type":"text","text":"Searching once more."},` +
			`{"type":"server_tool_use","id":"srvtoolu_mecha_03","name":"web_search","input":{"query":"neap tide dates"}}]`,
		stop: provider.StopPauseTurn, native: "pause_turn", deltas: "text:Searching once more.|", sentBack: true,
	},
	{
		name: "citations_delta fills the cited text block", file: "anthropic_citations.sse", wire: "anthropic",
		content: `[{"type":"text","text":"The capital is "},` +
			`{"type":"text","text":"Paris","citations":[` +
			`{"type":"web_search_result_location","cited_text":"Paris is the capital and largest city of France.","url":"https://atlas.example/france","title":"France","encrypted_index":"RW5jcnlwdGVkMQ=="},` +
			`{"type":"char_location","cited_text":"capital: Paris","document_index":0,"document_title":"Notes","start_char_index":10,"end_char_index":24}]},` +
			`{"type":"text","text":", on the Seine."}]`,
		stop: provider.StopEndTurn, native: "end_turn", deltas: "text:The capital is |text:Paris|text:, on the Seine.|", sentBack: true,
		text: "The capital is Paris, on the Seine.",
	},
	{
		name: "refusal", file: "anthropic_refusal.sse", wire: "anthropic",
		content: `[{"type":"text","text":"Here is how"}]`,
		stop:    provider.StopOther, native: "refusal", deltas: "text:Here is how|",
	},
	{
		name: "stop_sequence", file: "anthropic_stop_sequence.sse", wire: "anthropic",
		content: `[{"type":"text","text":"first part"}]`,
		stop:    provider.StopOther, native: "stop_sequence", deltas: "text:first part|",
	},
	{
		name: "delta.content as thinking parts, then strings", file: "openai_content_parts.sse", wire: "openai",
		content: `[{"type":"thinking","thinking":"Two and two make four."},{"type":"text","text":"It is 4."}]`,
		stop:    provider.StopEndTurn, native: "stop",
		deltas: "thinking:Two|thinking: and two|thinking: make four.|text:It|text: is 4.|",
	},
	{
		name: "delta.content as thinking and text parts in one chunk", file: "openai_content_parts_mixed.sse", wire: "openai",
		content: `[{"type":"thinking","thinking":"Look it up first."},{"type":"text","text":"Checking the file."},` +
			`{"type":"tool_use","id":"mechacall1","name":"fs_read","input":{"path":"go.mod"}}]`,
		stop: provider.StopToolUse, native: "tool_calls",
		deltas: "thinking:Look it up|thinking: first.|text:Checking|text: the file.|",
	},
	{
		name: "delta.content parts that carry no text are counted", file: "openai_content_parts_reference.sse", wire: "openai",
		content: `[{"type":"text","text":"The tide turns at 14:02 and again at 02:31."}]`,
		stop:    provider.StopEndTurn, native: "stop",
		deltas:  "text:The tide turns at 14:02|text: and again at 02:31|text:.|",
		skipped: map[string]int{"reference": 2},
	},
	{
		name: "delta.refusal is the answer's text", file: "openai_refusal.sse", wire: "openai",
		content: `[{"type":"text","text":"I'm sorry, I can't help with that."}]`,
		stop:    provider.StopEndTurn, native: "stop",
		deltas: "text:I'm sorry, |text:I can't help with that.|",
	},
	{
		// Follows the unstreamed form of the same recordings: message.content
		// as a list of a thinking part and a text part (pydantic-ai,
		// tests/models/cassettes/test_mistral/test_mistral_model_thinking_part.yaml).
		name: "message.content as parts, unstreamed", file: "openai_content_parts_message.json", wire: "openai",
		content: `[{"type":"thinking","thinking":"Short question."},{"type":"text","text":"Yes."}]`,
		stop:    provider.StopEndTurn, native: "stop",
	},
}

// play serves a shape's file as the fake's one answer and returns a client
// of the shape's wire pointed at it.
func (s shape) play(t *testing.T, more ...string) (provider.Provider, func(n int) map[string]any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(streamDir, s.file))
	if err != nil {
		t.Fatal(err)
	}
	ct := "text/event-stream"
	if strings.HasSuffix(s.file, ".json") {
		ct = "application/json"
	}
	turn, err := json.Marshal(map[string]string{"body": string(data), "content_type": ct})
	if err != nil {
		t.Fatal(err)
	}
	script := `{"turns":[` + string(turn)
	for _, m := range more {
		script += "," + m
	}
	script += "]}"
	var f flavour
	for _, fl := range flavours() {
		if fl.wire == s.wire {
			f = fl
			break
		}
	}
	p, srv := f.start(t, script)
	return p, func(n int) map[string]any { return body(t, srv, n) }
}

// TestRealShapes plays each shape to its wire's client: the answer's
// content (blocks the client does not interpret kept whole, their streamed
// input in them), the neutral stop reason and the provider's own.
func TestRealShapes(t *testing.T) {
	t.Parallel()
	for _, s := range shapes {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			p, _ := s.play(t)
			resp, deltas, err := ask(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(resp.Content)
			if err != nil {
				t.Fatal(err)
			}
			if !sameJSON(t, got, []byte(s.content)) {
				t.Errorf("content\n got %s\nwant %s", got, s.content)
			}
			if resp.StopReason != s.stop || resp.NativeStopReason != s.native {
				t.Errorf("stop reasons = %q, %q; want %q, %q", resp.StopReason, resp.NativeStopReason, s.stop, s.native)
			}
			if deltas != s.deltas {
				t.Errorf("deltas = %q, want %q", deltas, s.deltas)
			}
			if !reflect.DeepEqual(resp.Skipped, s.skipped) {
				t.Errorf("skipped = %v, want %v", resp.Skipped, s.skipped)
			}
			if got := transcript.TextOf(resp.Content); s.text != "" && got != s.text {
				t.Errorf("text = %q, want %q", got, s.text)
			}
		})
	}
}

// TestRecordedBlocksSentBack: an answer with server-side tool blocks,
// recorded in a transcript and read back, goes back to the API exactly as
// recorded when the conversation continues (a resume, a replay's next
// turn, a paused turn's continuation).
func TestRecordedBlocksSentBack(t *testing.T) {
	t.Parallel()
	for _, s := range shapes {
		if !s.sentBack {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			p, body := s.play(t, `{"text":"ok"}`)
			req := &provider.Request{Model: "test-model", MaxTokens: 1000,
				Messages: []transcript.Message{{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("q")}}}}
			resp, _, err := ask(p, req)
			if err != nil {
				t.Fatal(err)
			}
			line, err := transcript.Encode(&transcript.Message{Role: transcript.RoleAssistant, Content: resp.Content, StopReason: resp.NativeStopReason})
			if err != nil {
				t.Fatal(err)
			}
			rec, err := transcript.Decode(line)
			if err != nil {
				t.Fatal(err)
			}
			recorded := rec.(*transcript.Message)
			req.Messages = append(req.Messages, *recorded,
				transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("and?")}})
			if _, _, err := ask(p, req); err != nil {
				t.Fatal(err)
			}
			var onDisk struct {
				Content json.RawMessage `json:"content"`
			}
			if err := json.Unmarshal(line, &onDisk); err != nil {
				t.Fatal(err)
			}
			sent, _ := json.Marshal(path(body(1), "messages", 1, "content"))
			if !sameJSON(t, sent, onDisk.Content) || !sameJSON(t, sent, []byte(s.content)) {
				t.Errorf("sent back\n got %s\nwant %s (as recorded)\nand  %s (as streamed)", sent, onDisk.Content, s.content)
			}
		})
	}
}

// sameJSON reports whether two JSON texts hold the same value.
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var va, vb any
	if err := json.Unmarshal(a, &va); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &vb); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return reflect.DeepEqual(va, vb)
}
