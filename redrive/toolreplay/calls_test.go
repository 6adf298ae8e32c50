package toolreplay

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// file writes a transcript of the records, with extra lines (already
// encoded) spliced in after the record at each index.
func file(t *testing.T, recs []transcript.Record, raw map[int]string) string {
	t.Helper()
	var buf bytes.Buffer
	for i, r := range recs {
		b, err := transcript.Encode(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		if !bytes.HasSuffix(b, []byte("\n")) {
			buf.WriteByte('\n')
		}
		if s, ok := raw[i]; ok {
			buf.WriteString(s)
		}
	}
	path := filepath.Join(t.TempDir(), "20260101T000000-0000abcd.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func meta() *transcript.Meta {
	return &transcript.Meta{Format: 1, ID: "20260101T000000-0000abcd", CreatedAt: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Provider: "mock", Model: "mock-1", Workspace: "/w", Title: "t"}
}

func user(blocks ...transcript.Block) *transcript.Message {
	return &transcript.Message{Role: transcript.RoleUser, Content: blocks}
}

func assistant(blocks ...transcript.Block) *transcript.Message {
	return &transcript.Message{Role: transcript.RoleAssistant, Content: blocks}
}

func use(id, name, input string) transcript.Block {
	return transcript.ToolUseBlock(id, name, json.RawMessage(input))
}

func TestExtractExact(t *testing.T) {
	t.Parallel()
	path := file(t, []transcript.Record{
		meta(),
		user(transcript.TextBlock("go")),
		// Parallel calls answered out of order: kept in call order.
		assistant(use("a", "fs_read", `{"path":"a"}`), use("b", "fs_write", `{"path":"b","content":"x"}`)),
		user(transcript.ToolResultBlock("b", "denied by the user", true), transcript.ToolResultBlock("a", "A", false)),
		assistant(use("c", "fs_write", `{"path":"c","content":"y"}`)),
		user(transcript.ToolResultBlock("c", "denied: fs_write modifies the workspace and the run is in read-only mode", true)),
		assistant(use("d", "fs_read", `{"path":"gone"}`)),
		user(transcript.ToolResultBlock("d", "no such file", true)),
		assistant(transcript.TextBlock("done")),
	}, nil)
	c, err := Extract(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != SourceTranscript || c.Lossy() || c.Meta.ID != "20260101T000000-0000abcd" {
		t.Errorf("source %q lossy %v gaps %v", c.Source, c.Lossy(), c.Gaps)
	}
	want := []struct {
		name, input, result string
		outcome             sessionview.Outcome
		expect              Expect
	}{
		{"fs_read", `{"path":"a"}`, "A", sessionview.Succeeded, Succeed},
		{"fs_write", `{"path":"b","content":"x"}`, "denied by the user", sessionview.Denied, Skip},
		{"fs_write", `{"path":"c","content":"y"}`, "denied: fs_write modifies the workspace and the run is in read-only mode", sessionview.Refused, Skip},
		{"fs_read", `{"path":"gone"}`, "no such file", sessionview.Failed, Fail},
	}
	if len(c.Calls) != len(want) {
		t.Fatalf("%d calls, want %d: %+v", len(c.Calls), len(want), c.Calls)
	}
	for i, w := range want {
		got := c.Calls[i]
		if got.Index != i+1 || got.Name != w.name || string(got.Input) != w.input || got.Result != w.result ||
			!got.HasResult || got.Outcome != w.outcome || got.Expect != w.expect {
			t.Errorf("call %d: %+v, want %+v", i+1, got, w)
		}
	}
	if n := len(c.Redone()); n != 2 {
		t.Errorf("%d calls redone, want 2", n)
	}
	if !strings.Contains(c.Calls[1].Note, "never ran") {
		t.Errorf("denied call's note: %q", c.Calls[1].Note)
	}
}

func TestExtractLossy(t *testing.T) {
	t.Parallel()
	recs := []transcript.Record{
		meta(),
		user(transcript.TextBlock("go")),
		assistant(use("a", "fs_write", `{"path":"a","content":"1"}`)),
		user(transcript.ToolResultBlock("a", "ok", false)),
		assistant(use("b", "shell", `{"command":"sleep 100"}`)),
		user(transcript.UnknownOutcomeBlock("b", "outcome unknown: ...")),
		assistant(use("c", "fs_read", `"not an object"`)),
		user(transcript.ToolResultBlock("c", "invalid input", true)),
		assistant(use("d", "fs_write", `{"path":"d","content":"2"}`)),
	}
	// A torn line where a call was, after the call at index 3 (c).
	torn := map[int]string{7: `{"record":"message","role":"assistant","content":[{"type":"tool_use","id":"x","name":"fs_wr` + "\n"}
	c, err := Extract(file(t, recs, torn))
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != SourceReconstructed || !c.Lossy() {
		t.Fatalf("source %q lossy %v", c.Source, c.Lossy())
	}
	wantGaps := []struct {
		index int
		has   string
	}{
		{2, "call 2 (shell): its result was never recorded (a resume answered it"},
		{3, "call 3 (fs_read): its arguments are not a JSON object"},
		{4, "line 9 cannot be parsed: it held a tool call, whose name and arguments are lost"},
		{4, "call 4 (fs_write): its result was never recorded (the run ended"},
	}
	if len(c.Gaps) != len(wantGaps) {
		t.Fatalf("gaps %+v", c.Gaps)
	}
	// In script order: the lost line before the call after it.
	for i, w := range wantGaps {
		if g := c.Gaps[i]; g.Index != w.index || !strings.HasPrefix(g.Reason, w.has) {
			t.Errorf("gap %d: %+v, want index %d and a reason starting %q", i, g, w.index, w.has)
		}
	}
	if e := c.Calls[1].Expect; e != Unrecorded {
		t.Errorf("unknown outcome: expect %v", e)
	}
	// The script's comment for each call says what is unsure about it.
	if n := c.Calls[1].Note; !strings.HasPrefix(n, "its outcome is unknown: a resume answered it") {
		t.Errorf("unknown outcome: note %q", n)
	}
	if n := c.Calls[3].Note; !strings.HasPrefix(n, "its result was never recorded: the run ended") {
		t.Errorf("unanswered: note %q", n)
	}
	if e := c.Calls[2].Expect; e != Skip {
		t.Errorf("bad input: expect %v", e)
	}
	if e := c.Calls[3].Expect; e != Unrecorded {
		t.Errorf("unanswered: expect %v", e)
	}
}

func TestExtractTornTail(t *testing.T) {
	t.Parallel()
	recs := []transcript.Record{
		meta(),
		user(transcript.TextBlock("go")),
		assistant(use("a", "fs_read", `{"path":"a"}`)),
	}
	// The result was being written when the process died.
	c, err := Extract(file(t, recs, map[int]string{2: `{"record":"message","role":"user","content":[{"type":"tool_result","tool_use_id":"a","cont`}))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Gaps) != 2 || !strings.Contains(c.Gaps[1].Reason, "line 4 is cut short (torn): it held a tool result") || c.Gaps[1].Index != 2 {
		t.Errorf("gaps %+v", c.Gaps)
	}
}

// TestExtractServed reads tool_call records (an MCP client's calls, or a
// rerun's) as calls with results.
func TestExtractServed(t *testing.T) {
	t.Parallel()
	path := file(t, []transcript.Record{
		meta(),
		&transcript.ToolCall{ID: json.RawMessage(`1`), Tool: "fs_read", Arguments: json.RawMessage(`{"path":"a"}`), Content: json.RawMessage(`[{"type":"text","text":"A"},{"type":"image","data":"x"}]`)},
		&transcript.ToolCall{ID: json.RawMessage(`"b"`), Tool: "fs_write", Arguments: json.RawMessage(`{"path":"b"}`), Content: json.RawMessage(`[{"type":"text","text":"denied by the user"}]`), IsError: true},
		&transcript.ToolCall{ID: json.RawMessage(`3`), Tool: "nope", Arguments: json.RawMessage(`null`), Error: "unknown tool \"nope\""},
		&transcript.ToolCall{ID: json.RawMessage(`4`), Tool: "fs_read", Arguments: json.RawMessage(`{"path":"c"}`)},
	}, nil)
	c, err := Extract(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Calls) != 4 {
		t.Fatalf("calls %+v", c.Calls)
	}
	if g := c.Calls[0]; g.Result != "A\n[image]" || g.Expect != Succeed {
		t.Errorf("call 1: %+v", g)
	}
	if g := c.Calls[1]; g.Expect != Skip {
		t.Errorf("a denied call is redone: %+v", g)
	}
	if g := c.Calls[2]; g.Expect != Fail || g.Result != `unknown tool "nope"` || len(g.Input) != 0 {
		t.Errorf("a protocol error: %+v", g)
	}
	if g := c.Calls[3]; g.Expect != Unrecorded || len(c.Gaps) != 1 || c.Gaps[0].Index != 4 {
		t.Errorf("no result: %+v, gaps %+v", g, c.Gaps)
	}
}
