package turnscript

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// answers plays the answer without the server's details, and four stop
// reasons: a reader like the mock.
var answers = Reader{
	Prefix: "r", Name: "the reader",
	Plays:       []string{"text", "thinking", "tool_calls", "tool_calls.name", "tool_calls.input", "usage", "stop_reason", "error"},
	StopReasons: []string{"end_turn", "tool_use"},
}

// TestFields: a field counts as set when the script gives it, even as a
// zero (cut_after 0, usage {}); a tool call's fields are named under
// tool_calls.
func TestFields(t *testing.T) {
	t.Parallel()
	s, err := Parse([]byte(`{"turns":[{"text":"a","cut_after":0,"usage":{},
		"tool_calls":[{"name":"f"},{"name":"g","input":{},"arguments":""}]}]}`), Reader{Plays: all()})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Turns[0].fields()
	want := []string{"text", "tool_calls", "usage", "cut_after", "tool_calls.name", "tool_calls.input", "tool_calls.arguments"}
	if !slices.Equal(got, want) {
		t.Errorf("fields = %q, want %q", got, want)
	}
}

// all is every field of the format.
func all() []string {
	var t Turn
	for _, p := range []**int{&t.CutAfter, &t.DropAfter, &t.MalformedAfter, &t.PingAfter} {
		*p = new(int)
	}
	t.Text, t.Thinking, t.Signature, t.RedactedThinking, t.StopReason, t.Model = "x", "x", "x", "x", "x", "x"
	t.Usage, t.Error, t.StreamError = &transcript.Usage{}, &Error{}, &StreamError{}
	t.Status, t.ErrorType, t.ErrorMessage, t.Body, t.BodyFile, t.ContentType, t.RetryAfter, t.EchoKey, t.Hang, t.DelayMS = 1, "x", "x", "x", "x", "x", "x", true, true, 1
	s := "x"
	t.ToolCalls = []ToolCall{{ID: "x", Name: "x", Input: json.RawMessage("{}"), Arguments: &s}}
	return t.fields()
}

// TestRefused: a field the reader does not play, or a stop reason, is
// refused in one line naming the turn, the field and the reader; what no
// reader could play is refused for any.
func TestRefused(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`{"turns":[{"text":"a"},{"cut_after":0}]}`:                                     "r: script: turn 2: cut_after is not played by the reader",
		`{"turns":[{"tool_calls":[{"name":"f","arguments":"{"}]}]}`:                    "r: script: turn 1: tool_calls.arguments is not played by the reader",
		`{"turns":[{"tool_calls":[{"id":"x","name":"f"}]}]}`:                           "r: script: turn 1: tool_calls.id is not played by the reader",
		`{"turns":[{"stop_reason":"max_tokens"}]}`:                                     `r: script: turn 1: stop_reason "max_tokens" is not played by the reader (only end_turn, tool_use)`,
		`{"turns":[{"signature":"s","thinking":"t"}]}`:                                 "r: script: turn 1: signature is not played by the reader",
		`{"turns":[{"text":"x","error":{"message":"m"}}]}`:                             "r: script: turn 1: an error turn has no text, thinking or tool calls",
		`{"turns":[{"tool_calls":[{"name":"f","input":"s"}]}]}`:                        "r: script: turn 1: tool call 1 (f): input is not a JSON object",
		`{"turns":[{"txt":"a"}]}`:                                                      `r: script: json: unknown field "txt"`,
		`{"turns":[]} []`:                                                              "r: script: text after the JSON object",
		`{"turns":[{"text":"a"},{"error":{"status":500}},{"stop_reason":"end_turn"}]}`: "r: script: turn 2: error without a message",
	}
	for in, want := range tests {
		_, err := Parse([]byte(in), answers)
		if err == nil || err.Error() != want {
			t.Errorf("Parse(%s) = %v, want %q", in, err, want)
		}
	}
	if _, err := Parse([]byte(`{"turns":[{"stop_reason":"whatever"}]}`), Reader{Plays: []string{"stop_reason"}}); err != nil {
		t.Errorf("a reader without StopReasons refused one: %v", err)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.json")
	if err := os.WriteFile(path, []byte(`{"turns":[{"hang":true}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(path, answers); err == nil || err.Error() != "r: script: turn 1: hang is not played by the reader (in "+path+")" {
		t.Errorf("Load = %v", err)
	}
	if _, err := Load(filepath.Join(dir, "none.json"), answers); err == nil || !strings.HasPrefix(err.Error(), "r: ") {
		t.Errorf("Load of a missing file = %v", err)
	}
	if _, err := Load(dir, answers); err == nil {
		t.Error("Load of a directory succeeded")
	}
}

// TestBodyFile: a body_file is read, byte for byte, from the script's
// directory (the working directory for Parse); a missing one, or one with
// a body too, is refused.
func TestBodyFile(t *testing.T) {
	t.Parallel()
	bodies := Reader{Prefix: "r", Name: "the reader", Plays: []string{"body", "body_file", "content_type"}}
	dir := t.TempDir()
	stream := "event: ping\r\ndata: {}\n\n"
	if err := os.WriteFile(filepath.Join(dir, "a.sse"), []byte(stream), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "s.json")
	if err := os.WriteFile(path, []byte(`{"turns":[{"body_file":"a.sse","content_type":"text/event-stream"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, bodies)
	if err != nil || s.Turns[0].Body != stream {
		t.Fatalf("Load = %+v, %v", s, err)
	}
	abs, _ := json.Marshal(filepath.Join(dir, "a.sse"))
	if s, err := Parse([]byte(`{"turns":[{"body_file":`+string(abs)+`}]}`), bodies); err != nil || s.Turns[0].Body != stream {
		t.Errorf("Parse with an absolute body_file = %+v, %v", s, err)
	}
	if _, err := Parse([]byte(`{"turns":[{"body_file":"none.sse"}]}`), bodies); err == nil || !strings.HasPrefix(err.Error(), "r: script: turn 1: body_file: ") {
		t.Errorf("a missing body_file: %v", err)
	}
	if _, err := Parse([]byte(`{"turns":[{"body":"x","body_file":"a.sse"}]}`), bodies); err == nil || !strings.Contains(err.Error(), "a body or a body_file, not both") {
		t.Errorf("body and body_file: %v", err)
	}
	if _, err := Parse([]byte(`{"turns":[{"body_file":"a.sse"}]}`), answers); err == nil || !strings.Contains(err.Error(), "body_file is not played by the reader") {
		t.Errorf("a reader that plays no body_file: %v", err)
	}
}

// TestRendering: the defaults both readers share.
func TestRendering(t *testing.T) {
	t.Parallel()
	args := "not json"
	calls := Turn{Text: "12345678", ToolCalls: []ToolCall{{Name: "f", Input: json.RawMessage(" { \"a\" : 1 } ")}, {Name: "g"}, {Name: "h", Arguments: &args}}}
	if got := calls.Stop(); got != "tool_use" {
		t.Errorf("Stop with calls = %q", got)
	}
	if got := (&Turn{}).Stop(); got != "end_turn" {
		t.Errorf("Stop without calls = %q", got)
	}
	if got := (&Turn{StopReason: "weird", ToolCalls: calls.ToolCalls}).Stop(); got != "weird" {
		t.Errorf("Stop given = %q", got)
	}
	if a, b, c := calls.ToolCalls[0].ArgumentsText(), calls.ToolCalls[1].ArgumentsText(), calls.ToolCalls[2].ArgumentsText(); a != `{"a":1}` || b != "{}" || c != "not json" {
		t.Errorf("ArgumentsText = %q %q %q", a, b, c)
	}
	// out: 8 text + 1+7 + 1+2 + 1+8 = 28 bytes, 7 tokens; in: 2 bytes, at least 1.
	if u := calls.UsageFor(2); u != (transcript.Usage{InputTokens: 1, OutputTokens: 7}) {
		t.Errorf("UsageFor = %+v", u)
	}
	given := transcript.Usage{InputTokens: 5}
	if u := (&Turn{Usage: &given}).UsageFor(400); u != given {
		t.Errorf("UsageFor given = %+v", u)
	}
}
