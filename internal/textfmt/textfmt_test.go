package textfmt

import (
	"strings"
	"testing"
)

func TestCuts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{OneLine("  a\n\tb  c \r\n"), "a b c"},
		{Clip("héllo wörld", 20), "héllo wörld"},
		{Clip("héllo wörld", 7), "héllo…"},
		{Clip("abc", 0), "abc"},
		{JSON([]byte(`{ "z": 1,
  "a": [1, 2] }`), 100), `{"z":1,"a":[1,2]}`},
		{JSON([]byte(`{"path": "abcdefghij"}`), 12), `{"path":"ab…`},
		{JSON([]byte("not\njson"), 100), "not json"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestOneLineQuickPath holds OneLine's quick path (text already on one
// line, returned as it is) to the long way round, over every short string
// of a few telling characters, ASCII and not.
func TestOneLineQuickPath(t *testing.T) {
	t.Parallel()
	alphabet := []string{"a", " ", "\t", "\n", "\v", "\r", "\x1b", "\x7f", "\u00a0", "\u0085", "é", "\u2003"}
	var walk func(s string, depth int)
	walk = func(s string, depth int) {
		if want := strings.Join(strings.Fields(s), " "); OneLine(s) != want {
			t.Errorf("OneLine(%q) = %q, want %q", s, OneLine(s), want)
		}
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			walk(s+c, depth-1)
		}
	}
	walk("", 4)
	for _, n := range []int{0, 7, 999, 1000, 12345, -5} {
		if got, want := Count(n), map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 12345: "12,345", -5: "-5"}[n]; got != want {
			t.Errorf("Count(%d) = %q, want %q", n, got, want)
		}
	}
}
