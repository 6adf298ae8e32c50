package transcript

import (
	"bytes"
	"os"
	"testing"
)

// FuzzDecode checks that Decode never panics, and that whatever it accepts
// encodes to one line that decodes to the same kind.
func FuzzDecode(f *testing.F) {
	for _, name := range v1Fixtures(f) {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			f.Add(line)
		}
	}
	f.Add([]byte(`{"record":"message","role":"user","content":[{"type":"tool_result","content":null}]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := Decode(line)
		if err != nil {
			return
		}
		out, err := Encode(r)
		if err != nil {
			// Some accepted records cannot be written back (an unknown
			// record that is not valid JSON once trimmed, say); that is a
			// refusal, not a bug.
			return
		}
		if bytes.Count(out, []byte("\n")) != 1 {
			t.Fatalf("encoded %q as more than one line: %q", line, out)
		}
		back, err := Decode(out)
		if err != nil {
			t.Fatalf("re-decode of %q: %v", out, err)
		}
		if back.Kind() != r.Kind() {
			t.Fatalf("kind changed %q -> %q", r.Kind(), back.Kind())
		}
	})
}
