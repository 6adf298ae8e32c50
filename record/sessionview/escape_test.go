package sessionview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/sessionview"
)

// hostile is a transcript with an attack in every string a record holds:
// a set-title sequence, a clear-screen, a BEL, a DEL, a C1 CSI and a bidi
// override (all as JSON escapes, so the file is valid JSON).
const attack = `\u001b]0;pwned\u0007\u001b[2J\u007f\u009b31m\u202e`

var hostile = strings.ReplaceAll(`{"record":"meta","format":1,"id":"20260805T091500-3f2a1b7c","created_at":"2026-08-05T09:15:00Z","provider":"p@","model":"m@","workspace":"/w@","title":"t@","replay_of":"r@","rerun_of":"x@","mcp_client":{"name":"c@","version":"v@","protocol_version":"p@"},"imported_from":{"harness":"h@","path":"/p@"}}
{"record":"config","mecha_version":"v@","provider":"p@","model":"m@","workspace":"/w@","system_prompt":"s@","tools":["t@"],"effort":"e@","temperature":null,"seed":null,"thinking":false,"cache_prompt":false,"max_tokens":1,"max_turns":1,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":1,"permission_mode":"a@","trifecta":"t@","sandbox":"s@","sandbox_network":false,"mcp_upstream":{"name":"u@","transport":"stdio","command":"c@","args":["a@"],"server":{"name":"n@","version":"v@"}}}
{"record":"config","mecha_version":"w@","provider":"q@","model":"n@","workspace":"/v@","system_prompt":"z@","tools":["u@"],"effort":"f@","temperature":null,"seed":null,"thinking":false,"cache_prompt":false,"max_tokens":2,"max_turns":1,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":1,"permission_mode":"b@","trifecta":"u@","sandbox":"t@","sandbox_network":false}
{"record":"message","role":"user","content":[{"type":"text","text":"u@\nline two@"}]}
{"record":"message","role":"assistant","content":[{"type":"thinking","thinking":"th@"},{"type":"text","text":"a@"},{"type":"tool_use","id":"i@","name":"n@","input":{"k@":"v@"}},{"type":"odd@"}]}
{"record":"message","role":"user","content":[{"type":"tool_result","tool_use_id":"i@","content":"r@\nr2@","is_error":true},{"type":"tool_result","tool_use_id":"o@","content":"orphan@"},{"type":"text","text":"steer@"}]}
{"record":"message","role":"sys@","content":[{"type":"text","text":"aside@"}]}
{"record":"compaction","replaces":1,"summary":"sum@","usage":{"input_tokens":1,"output_tokens":1}}
{"record":"tool_call","id":"id@","tool":"tool@","arguments":{"a":"b@"},"content":[{"type":"text","text":"c@"},{"type":"image@","mimeType":"m@"}],"started_at":"2026-08-05T09:15:00Z","duration_ms":1}
{"record":"tool_call","id":"id2","tool":"tool@","arguments":{},"error":"err@","started_at":"2026-08-05T09:15:00Z","duration_ms":1}
{"record":"summary","usage":{"input_tokens":1,"output_tokens":1},"turns":1,"stop_reason":"s@","error":"e@"}
{"record":"odd@"}
`, "@", attack)

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// rawControl reports a byte or character a terminal would act on.
func rawControl(s string) bool {
	return strings.ContainsAny(s, "\x1b\x07\x7f\u009b\u202e")
}

func TestTextShowsNothingRaw(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "20260805T091500-3f2a1b7c.jsonl")
	if err := os.WriteFile(path, []byte(hostile), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := sessionview.Build(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The control: what the records hold, as read, is raw.
	if !rawControl(v.Header.Meta.Title) {
		t.Fatal("the hostile transcript decodes to nothing raw: the check could not fail")
	}
	for _, opts := range []sessionview.TextOptions{{}, {Full: true}, {Color: true}, {Color: true, Full: true}} {
		var out bytes.Buffer
		if err := sessionview.WriteText(&out, path, nil, opts); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		if opts.Color {
			text = sgr.ReplaceAllString(text, "") // mecha's own emphasis
		}
		if rawControl(text) {
			i := strings.IndexAny(text, "\x1b\x07\x7f\u009b\u202e")
			t.Errorf("%+v: a raw control reaches the output near %q", opts, text[max(0, i-80):min(len(text), i+20)])
		}
		if n := strings.Count(out.String(), `\x1b]0;pwned\x07`); n < 20 {
			t.Errorf("%+v: the attack is shown escaped %d times only", opts, n)
		}
	}
	var js bytes.Buffer
	if err := sessionview.WriteJSON(&js, path, nil); err != nil {
		t.Fatal(err)
	}
	if rawControl(js.String()) {
		t.Error("show --json holds a raw control")
	}
}
