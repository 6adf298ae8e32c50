package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	records := []Record{
		&Meta{Format: 1, ID: "20260805T091500-3f2a1b7c", CreatedAt: at, Provider: "mock", Model: "mock-1", Workspace: "/w", Title: "t <&>"},
		&Config{MechaVersion: "dev", Provider: "mock", Model: "mock-1", Workspace: "/w", SystemPrompt: ptr("be brief\nand kind"),
			Tools: []string{"fs_read"}, Temperature: ptr(0.0), Seed: ptr(uint64(42)), MaxTokens: 100, MaxTurns: 3,
			PermissionMode: "ask", Trifecta: "off", Sandbox: "none", At: at,
			ToolSpecs: []ToolSpec{{Name: "fs_read", Description: "Read a <file>", InputSchema: json.RawMessage(`{"type":"object","required":["path"]}`)}}},
		&Message{Role: RoleUser, Content: []Block{TextBlock("hello\nworld")}, At: at},
		&Message{Role: RoleAssistant, Content: []Block{
			{Type: BlockThinking, Thinking: "hmm", Signature: "s"},
			ToolUseBlock("t1", "fs_read", json.RawMessage(`{"path":"a"}`)),
		}, StopReason: "tool_use"},
		&Message{Role: RoleAssistant, Content: []Block{
			{Type: "server_tool_use", Raw: json.RawMessage(`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"q"}}`)},
		}, StopReason: "pause_turn", At: at},
		&Message{Role: RoleUser, Content: []Block{ToolResultBlock("t1", "contents", false), ToolResultBlock("t2", "", true),
			UnknownOutcomeBlock("t3", "outcome unknown")}},
		&Taint{Private: true},
		&Summary{Usage: Usage{1, 2, 3, 4}, Turns: 2, Provider: "mock", Model: "mock-1", StopReason: "end_turn"},
		&Compaction{Replaces: 4, Summary: "so far", Usage: Usage{InputTokens: 9}},
		&Unknown{Record: "future", Raw: json.RawMessage(`{"record":"future", "x": [1, 2]}`)},
	}
	for _, r := range records {
		line, err := Encode(r)
		if err != nil {
			t.Fatalf("Encode(%T): %v", r, err)
		}
		if bytes.Count(line, []byte("\n")) != 1 || line[len(line)-1] != '\n' {
			t.Fatalf("Encode(%T) is not one line: %q", r, line)
		}
		if !bytes.HasPrefix(line, []byte(`{"record":"`+r.Kind()+`"`)) {
			t.Errorf("Encode(%T) does not start with its kind: %s", r, line)
		}
		back, err := Decode(line)
		if err != nil {
			t.Fatalf("Decode(%s): %v", line, err)
		}
		if u, ok := r.(*Unknown); ok {
			// Unknown records come back compacted.
			u.Raw = json.RawMessage(`{"record":"future","x":[1,2]}`)
		}
		if !reflect.DeepEqual(back, r) {
			t.Errorf("round trip of %T:\n got %#v\nwant %#v", r, back, r)
		}
	}
}

func TestConfigNullsNotInvented(t *testing.T) {
	t.Parallel()
	line, err := Encode(&Config{Provider: "p"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"system_prompt", "effort", "temperature", "seed", "max_output_tokens", "max_cost_usd", "compact_at_tokens"} {
		v, present := m[k]
		if !present || v != nil {
			t.Errorf("%s = %v (present %v), want null", k, v, present)
		}
	}
	for _, k := range []string{"mecha_version", "provider", "model", "workspace", "tools", "thinking", "cache_prompt", "max_tokens", "max_turns", "compact_keep_recent", "permission_mode", "trifecta", "sandbox", "sandbox_network"} {
		if _, present := m[k]; !present {
			t.Errorf("config field %s missing", k)
		}
	}
	if _, present := m["at"]; present {
		t.Errorf("zero at should be omitted: %s", line)
	}
	// tool_specs is absent when not recorded, and [] when nothing was offered.
	if _, present := m["tool_specs"]; present {
		t.Errorf("nil tool_specs should be omitted: %s", line)
	}
	line, err = Encode(&Config{Provider: "p", ToolSpecs: []ToolSpec{}})
	if err != nil || !strings.Contains(string(line), `"tool_specs":[]`) {
		t.Errorf("empty tool_specs encodes as %s, %v", line, err)
	}
	back, err := Decode(line)
	if err != nil || back.(*Config).ToolSpecs == nil {
		t.Errorf("empty tool_specs decodes as %#v, %v", back, err)
	}
}

func TestConfigToolSpecsStayOnOneLine(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage("{\n  \"type\": \"object\",\n  \"properties\": {\"path\": {\"type\": \"string\"}}\n}")
	line, err := Encode(&Config{ToolSpecs: []ToolSpec{{Name: "fs_read", Description: "Read a file.\nPaths are relative.", InputSchema: schema}}})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", line)
	}
	c := must(Decode(line)).(*Config)
	if c.ToolSpecs[0].Description != "Read a file.\nPaths are relative." || string(c.ToolSpecs[0].InputSchema) != `{"type":"object","properties":{"path":{"type":"string"}}}` {
		t.Errorf("tool spec came back as %+v (%s)", c.ToolSpecs[0], c.ToolSpecs[0].InputSchema)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestBlockShapes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		b    Block
		want string
	}{
		{TextBlock("x"), `{"type":"text","text":"x"}`},
		{ToolUseBlock("i", "n", nil), `{"type":"tool_use","id":"i","name":"n","input":{}}`},
		{ToolResultBlock("i", "<ok>", false), `{"type":"tool_result","tool_use_id":"i","content":"<ok>","is_error":false}`},
		{UnknownOutcomeBlock("i", "?"), `{"type":"tool_result","tool_use_id":"i","content":"?","is_error":true,"outcome_unknown":true}`},
		{Block{Type: BlockThinking, Thinking: "t"}, `{"type":"thinking","thinking":"t"}`},
		{Block{Type: "image", Raw: json.RawMessage(`{"type":"image","source":{}}`)}, `{"type":"image","source":{}}`},
	}
	for _, tt := range tests {
		got, err := marshal(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tt.want {
			t.Errorf("got %s, want %s", got, tt.want)
		}
	}
	if _, err := json.Marshal(Block{}); err == nil {
		t.Error("a block with no type must not encode")
	}
}

func TestDecodeRejects(t *testing.T) {
	t.Parallel()
	for _, line := range []string{
		``, `   `, `[]`, `"x"`, `{}`, `{"record":"meta"}`, `{"record":"message","content":[]}`,
		`{"record":"message","role":"user","content":[{"text":"no type"}]}`,
		`{"record":"summary","usage":"lots"}`, `{"record":"meta","id":"x"`, `{"record":"taint","private":"yes"}`,
		`{"record":7}`,
		`{"record":"compaction","replaces":-1,"summary":"s"}`, `{"record":"tool_call","input":{}}`,
	} {
		if r, err := Decode([]byte(line)); err == nil {
			t.Errorf("Decode(%q) = %#v, want an error", line, r)
		}
	}
}

func TestPeekKind(t *testing.T) {
	t.Parallel()
	for line, want := range map[string]string{
		`{"record":"meta","id":"x"}`: "meta",
		`  {"record":"taint"}`:       "taint",
		`{"id":"x","record":"meta"}`: "",
		`{"record":"a\"b"}`:          "",
	} {
		got, ok := PeekKind([]byte(line))
		if got != want || ok != (want != "") {
			t.Errorf("PeekKind(%s) = %q, %v", line, got, ok)
		}
	}
}

// decodeFile decodes every line of a fixture, returning the records and the
// 1-based numbers of lines that did not decode.
func decodeFile(t *testing.T, name string) (recs []Record, bad []int) {
	t.Helper()
	f, err := os.Open(filepath.Join(v1Dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		r, err := Decode(sc.Bytes())
		if err != nil {
			bad = append(bad, n)
			continue
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs, bad
}

// The v1 fixtures are frozen: these tests pin what every build reads from them.
func TestFrozenV1Basic(t *testing.T) {
	t.Parallel()
	recs, bad := decodeFile(t, "basic.jsonl")
	if len(bad) != 0 || len(recs) != 8 {
		t.Fatalf("basic.jsonl: %d records, bad lines %v", len(recs), bad)
	}
	m := recs[0].(*Meta)
	if m.ID != "20260805T091500-3f2a1b7c" || m.Provider != "anthropic" || m.Title != "summarize what changed" || !m.CreatedAt.Equal(time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)) {
		t.Errorf("meta = %+v", m)
	}
	c := recs[1].(*Config)
	if c.ToolSpecs != nil {
		t.Errorf("a config that predates tool_specs has specs %+v", c.ToolSpecs)
	}
	if c.SystemPrompt == nil || *c.SystemPrompt != "You are mecha." || c.Temperature != nil || c.MaxCostUSD == nil || *c.MaxCostUSD != 2.5 || !reflect.DeepEqual(c.Tools, []string{"fs_read", "fs_list"}) {
		t.Errorf("config = %+v", c)
	}
	calls := recs[3].(*Message).Content
	if calls[1].Name != "fs_read" || string(calls[1].Input) != `{"path":"CHANGES.md"}` || calls[0].Signature != "sig1" {
		t.Errorf("assistant blocks = %+v", calls)
	}
	res := recs[4].(*Message).Content
	if res[1].ToolUseID != "toolu_1" || res[1].Content != "v2: faster <list> & smaller" {
		t.Errorf("results = %+v", res)
	}
	if tt := recs[6].(*Taint); !tt.Private || tt.Untrusted {
		t.Errorf("taint = %+v", tt)
	}
	if s := recs[7].(*Summary); s.Usage != (Usage{1200, 340, 100, 50}) || s.Turns != 2 || s.StopReason != "end_turn" {
		t.Errorf("summary = %+v", s)
	}
}

func TestFrozenV1Foreign(t *testing.T) {
	t.Parallel()
	recs, bad := decodeFile(t, "foreign.jsonl")
	if len(bad) != 0 || len(recs) != 6 {
		t.Fatalf("foreign.jsonl: %d records, bad lines %v", len(recs), bad)
	}
	if m := recs[0].(*Meta); m.ID != "20260101T000000-00000000" {
		t.Errorf("meta with record not first: %+v", m)
	}
	img := recs[1].(*Message).Content[1]
	if img.Type != "image" || !strings.Contains(string(img.Raw), "iVBORw0K") {
		t.Errorf("unknown block not kept verbatim: %+v", img)
	}
	out, err := json.Marshal(img)
	if err != nil || !strings.Contains(string(out), `"media_type":"image/png"`) {
		t.Errorf("unknown block re-encodes as %s, %v", out, err)
	}
	if r := recs[3].(*Message).Content[0]; r.Content != "a\nb" || r.IsError {
		t.Errorf("array tool_result content = %+v", r)
	}
	u, ok := recs[4].(*Unknown)
	if !ok || u.Kind() != "reflection" || u.At.IsZero() {
		t.Errorf("future record = %#v", recs[4])
	}
	if s := recs[5].(*Summary); s.Usage.InputTokens != 10 || s.Usage.CacheReadTokens != 0 {
		t.Errorf("summary = %+v", s)
	}
}

func TestFrozenV1Torn(t *testing.T) {
	t.Parallel()
	recs, bad := decodeFile(t, "torn.jsonl")
	if len(recs) != 2 || !reflect.DeepEqual(bad, []int{3, 4}) {
		t.Fatalf("torn.jsonl: %d records, bad lines %v", len(recs), bad)
	}
}

func TestTaintMergeOnlyGrows(t *testing.T) {
	t.Parallel()
	a := Taint{Private: true}
	if got := a.Merge(Taint{}); got != (Taint{Private: true}) {
		t.Errorf("clean checkpoint disarmed taint: %+v", got)
	}
	if got := a.Merge(Taint{Untrusted: true}); !got.Private || !got.Untrusted || got.Clean() {
		t.Errorf("merge = %+v", got)
	}
	if !(Taint{}).Clean() {
		t.Error("zero taint should be clean")
	}
}

func TestToolCallRoundTrip(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	in := &ToolCall{
		ID:        json.RawMessage(`"req-7"`),
		Tool:      "echo",
		Arguments: json.RawMessage("{ \"text\" : \"<a & b>\",\n \"n\": 1.50 }"),
		Content:   json.RawMessage(`[{"type":"text","text":"<a & b>"}]`),
		IsError:   true,
		StartedAt: at, DurationMS: 1.5, At: at,
	}
	line, err := Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"record":"tool_call","id":"req-7","tool":"echo","arguments":{"text":"<a & b>","n":1.50},"content":[{"type":"text","text":"<a & b>"}],"is_error":true,"started_at":"2026-08-05T09:15:00Z","duration_ms":1.5,"at":"2026-08-05T09:15:00Z"}` + "\n"
	if string(line) != want {
		t.Fatalf("encoded\n%s\nwant\n%s", line, want)
	}
	r, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := r.(*ToolCall)
	if !ok || got.Tool != "echo" || string(got.ID) != `"req-7"` || !got.IsError || got.DurationMS != 1.5 || !got.StartedAt.Equal(at) {
		t.Fatalf("decoded %#v", r)
	}
	// No arguments and no result (a protocol error) are nulls.
	line, err = Encode(&ToolCall{Tool: "x", Error: "boom"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(line), `"id":null,"tool":"x","arguments":null,"content":null,"is_error":false,"error":"boom"`) {
		t.Fatalf("encoded %s", line)
	}
	if _, err := Encode(&ToolCall{}); err == nil {
		t.Fatal("a tool_call with no tool was encoded")
	}
	if _, err := Decode([]byte(`{"record":"tool_call","tool":""}`)); err == nil {
		t.Fatal("a tool_call with no tool was decoded")
	}
}

func TestImportedFromRoundTrip(t *testing.T) {
	m := &Meta{Format: 1, ID: "20250710T100000-5be1c2d3", Provider: "anthropic", Model: "claude-sonnet-4",
		ImportedFrom: &ImportedFrom{Harness: "claude-code", Path: "/h/.claude/projects/p/s.jsonl", Approximate: []string{"toolu_3"}}}
	line, err := Encode(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeMeta(line[:len(line)-1])
	if err != nil {
		t.Fatal(err)
	}
	if f := got.ImportedFrom; f == nil || f.Harness != "claude-code" || f.Path != m.ImportedFrom.Path || len(f.Approximate) != 1 {
		t.Fatalf("imported_from = %+v from %s", got.ImportedFrom, line)
	}
}
