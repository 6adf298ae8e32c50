package textfmt

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"two\nlines\tand a tab", "two\nlines\tand a tab"},
		{"windows\r\nline", "windows\r\nline"},
		{"over\rwrite", `over\x0dwrite`},
		{"end\r", `end\x0d`},
		{"\x1b]0;pwned\x07title", `\x1b]0;pwned\x07title`},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"nul\x00 del\x7f", `nul\x00 del\x7f`},
		{"c1 \u009b31m csi", `c1 \u009b31m csi`},
		{"nel\u0085", `nel\u0085`},
		{"bidi \u202eevil\u202c and \u2066iso\u2069", `bidi \u202eevil\u202c and \u2066iso\u2069`},
		{"marks \u200e\u200f\u061c", `marks \u200e\u200f\u061c`},
		{"bad \xff\xfe utf-8", `bad \xff\xfe utf-8`},
		{"raw c1 byte \x9b", `raw c1 byte \x9b`},
		{`a backslash \x1b stays`, `a backslash \x1b stays`},
		{"héllo wörld ✓ 日本", "héllo wörld ✓ 日本"},
		{"", ""},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := VisibleLine("a\x1b\n b\u0085c"); got != `a\x1b b\u0085c` {
		t.Errorf("VisibleLine = %q", got)
	}
}

// TestVisibleNoCopy: text with nothing to escape is the same string.
func TestVisibleNoCopy(t *testing.T) {
	s := strings.Repeat("safe text ✓\n", 100)
	if got := Visible(s); got != s {
		t.Fatal("changed safe text")
	}
	if n := testing.AllocsPerRun(100, func() { _ = Visible(s) }); n != 0 {
		t.Errorf("safe text allocated %v times", n)
	}
}

// FuzzVisible: whatever goes in, nothing a terminal acts on comes out, the
// result is UTF-8, and text with nothing to escape is unchanged.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "a\x1b]0;x\x07", "\u202e", "\xff", "\r\n", "\r", "é\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v := Visible(s)
		if !utf8.ValidString(v) {
			t.Fatalf("Visible(%q) = %q is not UTF-8", s, v)
		}
		for i, r := range v {
			if r == '\r' && strings.HasPrefix(v[i:], "\r\n") {
				continue
			}
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || invisibleRune(r) {
				t.Fatalf("Visible(%q) = %q holds %U", s, v, r)
			}
		}
		if firstUnsafe(s) == len(s) && v != s {
			t.Fatalf("Visible(%q) changed safe text to %q", s, v)
		}
		if Visible(v) != v {
			t.Fatalf("Visible is not idempotent on %q", s)
		}
	})
}

// TestVisibleWriter: text written in two pieces, split anywhere, comes out
// as Visible makes it whole: a character or a CR LF cut between writes
// survives, a lone CR or a character cut short at the end is escaped.
func TestVisibleWriter(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"title \x1b]0;pwned\x07 clip \x1b]52;c;cHduZWQ=\x07 \x1b[2J \u202eé ✓ 日本\r\nend\r",
		"a\xe6\x97", // cut short at the end
		"\xff\xfe ok \u009b",
	} {
		want := Visible(in)
		for split := 0; split <= len(in); split++ {
			var out strings.Builder
			w := VisibleWriter(&out)
			w.Write([]byte(in[:split]))
			w.Write([]byte(in[split:]))
			w.Close()
			if out.String() != want {
				t.Fatalf("%q split at %d: %q, want %q", in, split, out.String(), want)
			}
		}
	}
}

// TestJSONWriter: what encoding/json leaves raw is escaped, the JSON means
// the same, and a character split between writes survives.
func TestJSONWriter(t *testing.T) {
	t.Parallel()
	in := "{\"t\":\"a\u202eb\u009bc\x7fd é ✓ 日本\",\"n\":1}"
	want := `{"t":"a\u202eb\u009bc\u007fd é ✓ 日本","n":1}`
	for split := 0; split <= len(in); split++ {
		var out strings.Builder
		w := JSONWriter(&out)
		w.Write([]byte(in[:split]))
		w.Write([]byte(in[split:]))
		w.Close()
		if out.String() != want {
			t.Fatalf("split at %d: %q, want %q", split, out.String(), want)
		}
		var a, b any
		if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal([]byte(out.String()), &b) != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("split at %d: the JSON changed meaning", split)
		}
	}
}

// TestPlainASCII holds the eight-at-a-time scan to a byte-at-a-time one:
// every byte value at every place of a run longer than two words.
func TestPlainASCII(t *testing.T) {
	t.Parallel()
	for c := 0; c < 256; c++ {
		for at := 0; at < 19; at++ {
			b := []byte("abcdefghijklmnopqrs")
			b[at] = byte(c)
			want := len(b)
			for i, x := range b {
				if x >= 0x7f {
					want = i
					break
				}
			}
			if got := plainASCII(b); got != want {
				t.Fatalf("byte %#x at %d: %d, want %d", c, at, got, want)
			}
		}
	}
}

// TestVisibleLineQuickPath holds VisibleLine's quick path (plain text,
// returned as it is) to the long way round, Visible then OneLine's
// folding, over every join of three telling pieces.
func TestVisibleLineQuickPath(t *testing.T) {
	t.Parallel()
	parts := []string{"", "a", " ", "  ", "\t", "\n", "\r", "\x1b[31m", "\x7f", "\x00", "é", "\u202e", "\u0085", "…", "title", "x y", "-", "~", "\xff"}
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				s := a + b + c
				if got, want := VisibleLine(s), strings.Join(strings.Fields(Visible(s)), " "); got != want {
					t.Errorf("VisibleLine(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}
