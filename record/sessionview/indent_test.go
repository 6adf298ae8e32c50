package sessionview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// appendIndented must indent exactly as json.Indent does.
func checkIndented(t *testing.T, src []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, src, "    ", "  "); err != nil {
		return // not JSON: appendIndented's input never is
	}
	if got := appendIndented(nil, src, "    "); !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("appendIndented(%q) =\n%s\nwant\n%s", src, got, want.Bytes())
	}
}

func TestAppendIndentedMatchesIndent(t *testing.T) {
	t.Parallel()
	for _, s := range []string{`{}`, `[]`, `{"a":[]}`, `{"a":{},"b":[1,{}]}`, `"x"`, `"\\"`, `"a\"b\\\"c"`,
		`{"k\"":"{[,:]}","n":-1.5e3,"t":true,"f":null}`, `[[[]],[{}]]`} {
		checkIndented(t, []byte(s))
	}
	paths, _ := filepath.Glob("../transcript/testdata/v1/*.jsonl")
	for _, p := range paths {
		if _, err := session.Scan(p, func(_ int, rec transcript.Record) error {
			line, err := transcript.Encode(rec)
			if err != nil {
				return nil
			}
			checkIndented(t, bytes.TrimSuffix(line, []byte("\n")))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func FuzzAppendIndented(f *testing.F) {
	for _, s := range []string{`{"a":[1,"b\\",{}]}`, `[]`, `"\u2028"`} {
		f.Add([]byte(s))
	}
	if b, err := os.ReadFile("../transcript/testdata/v1/basic.jsonl"); err == nil {
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c bytes.Buffer
		if json.Compact(&c, b) != nil {
			return
		}
		checkIndented(t, c.Bytes())
	})
}
