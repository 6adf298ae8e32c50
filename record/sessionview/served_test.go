package sessionview_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/sessionview"
)

// served is a session as "mecha mcp proxy" writes it: a client in the
// header, the upstream in the config, then tool_call records.
const served = `{"record":"meta","format":1,"id":"20260805T091500-0000000a","created_at":"2026-08-05T09:15:00Z","provider":"mcp","model":"","workspace":"/w","title":"mcp proxy: everything","mcp_client":{"name":"claude-code","version":"2.1.0","protocol_version":"2025-06-18"}}
{"record":"config","mecha_version":"0.1.0","provider":"mcp","model":"","workspace":"/w","system_prompt":null,"tools":[],"effort":null,"temperature":null,"seed":null,"thinking":false,"cache_prompt":false,"max_tokens":0,"max_turns":0,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":0,"permission_mode":"yes","trifecta":"off","sandbox":"none","sandbox_network":true,"mcp_upstream":{"transport":"stdio","command":"npx","args":["-y","server-everything"],"server":{"name":"everything","version":"2.0.0","protocol_version":"2025-11-25"}}}
{"record":"tool_call","id":1,"tool":"echo","arguments":{"message":"hi"},"content":[{"type":"text","text":"Echo: hi"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"is_error":false,"started_at":"2026-08-05T09:15:01.5Z","duration_ms":0.25}
{"record":"tool_call","id":"b","tool":"nope","arguments":null,"content":null,"is_error":false,"error":"unknown tool \"nope\"","started_at":"2026-08-05T09:15:02Z","duration_ms":1}
`

func TestServedCalls(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(p, []byte(served), 0o600); err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := sessionview.WriteText(&text, p, nil, sessionview.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"client     claude-code 2.1.0 (protocol 2025-06-18)",
		"upstream stdio npx -y server-everything · everything 2.0.0 (protocol 2025-11-25)",
		"── mcp call 1 · 2026-08-05 09:15:01.500 UTC · 0.25 ms\n→ echo {\"message\":\"hi\"}\n  │ Echo: hi\n  │ [image block, image/png]\n",
		"── mcp call \"b\" · 2026-08-05 09:15:02.000 UTC · 1 ms\n→ nope null\n  ✗ error: unknown tool \"nope\"\n",
		"mcp calls  2\n",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := sessionview.WriteJSON(&js, p, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Meta    map[string]any   `json:"meta"`
		Records []map[string]any `json:"records"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, js.String())
	}
	if c, _ := doc.Meta["mcp_client"].(map[string]any); c["name"] != "claude-code" {
		t.Errorf("meta = %v", doc.Meta)
	}
	if len(doc.Records) != 3 || doc.Records[1]["record"] != "tool_call" || doc.Records[1]["tool"] != "echo" ||
		doc.Records[1]["id"] != 1.0 || doc.Records[2]["error"] != `unknown tool "nope"` {
		t.Errorf("records = %v", doc.Records)
	}
	v, err := sessionview.Build(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Totals.Served != 2 {
		t.Errorf("served = %d, want 2", v.Totals.Served)
	}
}

// TestServedUnanswered: a call that arrived (tool_call_start) and was
// never answered shows with no result and why; one that was answered
// shows once, with its result.
func TestServedUnanswered(t *testing.T) {
	t.Parallel()
	lines := strings.SplitAfter(served, "\n")
	head := lines[0] + lines[1]
	start := func(n int, tool string) string {
		return `{"record":"tool_call_start","call":` + string(rune('0'+n)) + `,"id":` + string(rune('0'+n)) + `,"tool":"` + tool + `","arguments":{"n":` + string(rune('0'+n)) + `},"started_at":"2026-08-05T09:15:0` + string(rune('0'+n)) + `Z"}` + "\n"
	}
	answered := `{"record":"tool_call","call":1,"id":1,"tool":"echo","arguments":{"n":1},"content":[{"type":"text","text":"one"}],"is_error":false,"started_at":"2026-08-05T09:15:01Z","duration_ms":3}` + "\n"
	for _, tc := range []struct{ name, body, why string }{
		{"killed", head + start(1, "echo") + start(2, "slow") + answered, sessionview.NoResultServerStopped},
		{"recording stopped", head + start(1, "echo") + start(2, "slow") + answered +
			`{"record":"summary","usage":{"input_tokens":0,"output_tokens":0,"cache_read_tokens":0,"cache_write_tokens":0},"turns":0,"provider":"mcp","stop_reason":"recording_stopped","error":"recording stopped: disk full"}` + "\n",
			sessionview.NoResultRecordingStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.jsonl")
			if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := sessionview.WriteText(&text, p, nil, sessionview.TextOptions{}); err != nil {
				t.Fatal(err)
			}
			out := text.String()
			for _, want := range []string{
				"── mcp call 1 · 2026-08-05 09:15:01.000 UTC · 3 ms\n→ echo {\"n\":1}\n  │ one\n",
				"── mcp call 2 · 2026-08-05 09:15:02.000 UTC · unanswered\n→ slow {\"n\":2}\n  ✗ " + tc.why + "\n",
				"mcp calls  2\n",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("text lacks %q:\n%s", want, out)
				}
			}
			if strings.Count(out, "mcp call 1 ") != 1 {
				t.Errorf("the answered call shows twice:\n%s", out)
			}
			var md bytes.Buffer
			if err := sessionview.WriteMarkdown(&md, p, nil, sessionview.MarkdownOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(md.String(), tc.why) {
				t.Errorf("markdown lacks %q:\n%s", tc.why, md.String())
			}
		})
	}
}
