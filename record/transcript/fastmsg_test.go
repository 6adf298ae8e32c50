package transcript

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// The fast path must read messages exactly as encoding/json reads them.
func TestDecodeMessageMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, text := range []string{
		"", "plain", "quote \" backslash \\ slash / \b\f\n\r\t", "é ü ✓ 😀", "\u2028\u2029",
		"bad utf8 \xff\xfe end", "nul \x00 ctl \x1f", "<html>&amp;</html>",
	} {
		for _, escapeHTML := range []bool{true, false} {
			var raw []byte
			if escapeHTML {
				raw, _ = json.Marshal(text)
			} else {
				raw, _ = marshal(text)
			}
			checkUnquote(t, raw)
		}
	}
	for _, raw := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00x"`, `"\u00e9\u0041"`, `"\ud83dx"`, `"a\u0000b"`} {
		checkUnquote(t, []byte(raw))
	}
	line := []byte(`{"record":"message","role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"x\ny"},{"type":"image","source":{"k":1}},{"type":"text","text":"t"}]}`)
	r, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	m := r.(*Message)
	want := []Block{ToolResultBlock("a", "x\ny", false), {Type: "image", Raw: json.RawMessage(`{"type":"image","source":{"k":1}}`)}, TextBlock("t")}
	if !reflect.DeepEqual(m.Content, want) {
		t.Errorf("content = %#v", m.Content)
	}
}

func checkUnquote(t *testing.T, raw []byte) {
	t.Helper()
	var want string
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	got, ok := unquote(raw)
	if !ok || got != want {
		t.Errorf("unquote(%s) = %q, %v; want %q", raw, got, ok, want)
	}
}

// FuzzUnquote compares the fast unquote with encoding/json on every string
// literal encoding/json accepts.
func FuzzUnquote(f *testing.F) {
	f.Add([]byte(`"a\nb"`))
	f.Add([]byte(`"\ud83d\ude00"`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		// encoding/json hands UnmarshalJSON the literal without surrounding space.
		raw = bytes.TrimSpace(raw)
		var want string
		if json.Unmarshal(raw, &want) != nil || len(raw) == 0 || raw[0] != '"' {
			return
		}
		got, ok := unquote(raw)
		if !ok || got != want {
			t.Fatalf("unquote(%q) = %q, %v; want %q", raw, got, ok, want)
		}
	})
}
