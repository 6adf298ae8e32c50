package session

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const searchFixture = `{"record":"meta","format":1,"id":"20260805T091500-aaaaaaaa","created_at":"2026-08-05T09:15:00Z","provider":"mock","model":"m","workspace":"/w","title":"needle in the title"}
{"record":"config","tools":[{"name":"needle"}]}
{"record":"message","role":"user","content":[{"type":"text","text":"find the \"needle\" <here> please"}]}
{"record":"message","role":"assistant","content":[{"type":"thinking","thinking":"a needle thought","signature":"s"},{"type":"tool_use","id":"t1","name":"read_file","input":{"needle":"path/to/hay.go"}}]}
{"record":"message","role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"package hay // needle at last"}]}
{"record":"message","role":"assistant","content":[{"type":"text","text":"done: needle found"}]}
{"record":"message","role":"user","content":[{"type":"text","text":"torn needle`

func searchFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "20260805T091500-aaaaaaaa.jsonl")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func hitsOf(t *testing.T, path string, q *Query) []string {
	t.Helper()
	var got []string
	err := search(path, q, func(h Hit) bool {
		got = append(got, strings.Join([]string{strconv.Itoa(h.Line), h.Role, h.Tool, h.Part, h.Text[h.Start:h.End]}, "|"))
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestSearch(t *testing.T) {
	t.Parallel()
	p := searchFile(t, searchFixture)
	re := func(s string) *Query {
		q, err := NewRegexQuery(s)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	role := func(q *Query, r, tool string) *Query { q.Role, q.Tool = r, tool; return q }
	for _, tc := range []struct {
		name string
		q    *Query
		want string
	}{
		// Not in the header, the config or a JSON key; the torn last line
		// does not decode.
		{"literal", NewLiteralQuery("needle"), "3|user||text|needle 4|assistant||thinking|needle 5|tool|read_file|result|needle 6|assistant||text|needle"},
		{"quotes", NewLiteralQuery(`"needle" <here>`), `3|user||text|"needle" <here>`},
		{"key only", NewLiteralQuery("hay.go"), "4|tool|read_file|input|hay.go"},
		{"role", role(NewLiteralQuery("needle"), "assistant", ""), "4|assistant||thinking|needle 6|assistant||text|needle"},
		{"tool", role(NewLiteralQuery("a"), "", "read_file"), "4|tool|read_file|input|a 5|tool|read_file|result|a"},
		{"regex prefix", re(`needle (at|found)`), "5|tool|read_file|result|needle at 6|assistant||text|needle found"},
		{"regex no prefix", re(`(?i)NEEDLE F\w+`), "6|assistant||text|needle found"},
		{"not utf-8", NewLiteralQuery("needle\xff"), ""},
		{"absent", NewLiteralQuery("haystack"), ""},
	} {
		if got := strings.Join(hitsOf(t, p, tc.q), " "); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, got, tc.want)
		}
	}
}

func TestSearchLongLines(t *testing.T) {
	t.Parallel()
	head := strings.SplitN(searchFixture, "\n", 2)[0] + "\n"
	long := strings.Repeat("x", 600<<10)
	content := head + `{"record":"message","role":"user","content":[{"type":"text","text":"` + long + `"}]}` + "\n" +
		`{"record":"message","role":"user","content":[{"type":"text","text":"` + long + ` needle"}]}` + "\n" +
		`{"record":"message","role":"user","content":[{"type":"text","text":"needle again"}]}` + "\n"
	got := hitsOf(t, searchFile(t, content), NewLiteralQuery("needle"))
	if strings.Join(got, " ") != "3|user||text|needle 4|user||text|needle" {
		t.Errorf("got %q", got)
	}
}

func TestNeedleOf(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain":          "plain",
		`say "hi there"`: "hi there",
		"a<b>longer&c":   "longer",
		"héllo wörld":    "llo w",
		"path/to/x.go":   "path",
		"\"\\<>":         "",
		"ab\u2028abc":    "abc",
		"ü":              "",
	} {
		if got := string(needleOf(in)); got != want {
			t.Errorf("needleOf(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSearchPrefilter holds the literal prefilter to decoding every line:
// skipping lines without the needle must never lose a match, whatever the
// query and however the text was escaped.
func FuzzSearchPrefilter(f *testing.F) {
	for _, s := range []string{"needle", `"needle" <here>`, "é", "a\nb", "\u2028", `\u0041`, "<", "hay.go"} {
		f.Add(s)
	}
	p := filepath.Join(f.TempDir(), "20260805T091500-aaaaaaaa.jsonl")
	content := searchFixture + "\n" + `{"record":"message","role":"user","content":[{"type":"text","text":"\u003chere\u003e \u00e9t\u00e9 a\nb \u2028 \\u0041 ABC 'q' \/x"}]}` + "\n"
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" {
			return
		}
		q := NewLiteralQuery(s)
		all := *q
		all.needle = nil
		got, want := hitsOf(t, p, q), hitsOf(t, p, &all)
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") && !q.never {
			t.Errorf("%q: prefiltered %q, decoding every line %q", s, got, want)
		}
	})
}

// TestSearchAnyKeyOrder: a record whose kind is not its first key (written
// by another tool) is searched like any other: a message is, a config is
// not.
func TestSearchAnyKeyOrder(t *testing.T) {
	t.Parallel()
	head := strings.SplitN(searchFixture, "\n", 2)[0] + "\n"
	content := head +
		`{"role":"user","record":"message","content":[{"type":"text","text":"needle out of order"}]}` + "\n" +
		`{"tools":[{"name":"needle"}],"record":"config"}` + "\n" +
		`{"record":"message","role":"assistant","content":[{"type":"text","text":"needle in order"}]}` + "\n"
	got := hitsOf(t, searchFile(t, content), NewLiteralQuery("needle"))
	if want := "2|user||text|needle 4|assistant||text|needle"; strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
