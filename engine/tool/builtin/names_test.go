package builtin

import (
	"testing"
	"unicode/utf8"
)

func TestNameEncoding(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, shown string }{
		{"plain.txt", "plain.txt"},
		{"été ✓.txt", "été ✓.txt"},
		{"a\xff.txt", `a\xff.txt`},
		{"caf\xe9", `caf\xe9`},
		{"dir\x80/f\xfe", `dir\x80/f\xfe`},
		{`a\xff.txt`, `a\\xff.txt`},
		{`back\slash`, `back\\slash`},
		{"both\\\xff", `both\\\xff`},
		{"\xc3", `\xc3`},
	} {
		if got := encodeName(tc.name); got != tc.shown {
			t.Errorf("encodeName(%q) = %q, want %q", tc.name, got, tc.shown)
		}
		if got := decodeName(tc.shown); got != tc.name {
			t.Errorf("decodeName(%q) = %q, want %q", tc.shown, got, tc.name)
		}
	}
	// What a model may type besides a listed name.
	for in, want := range map[string]string{
		`a\b`:      `a\b`,   // a backslash before anything else is itself
		`a\x41`:    `a\x41`, // only bytes from 80 up are escapes
		`a\x2f`:    `a\x2f`, // never a separator
		`a\x00`:    `a\x00`, // never a NUL
		`a\xFF`:    "a\xff", // either case
		`a\xf`:     `a\xf`,  // cut short
		`a\`:       `a\`,    // at the end
		`\xc3\xa9`: "é",     // bytes that make a character
	} {
		if got := decodeName(in); got != want {
			t.Errorf("decodeName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzNameEncoding: every name comes back from its listing, and what is
// listed is UTF-8.
func FuzzNameEncoding(f *testing.F) {
	for _, s := range []string{"", "a\xff", `a\xff`, `\\`, "\\\xff", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		shown := encodeName(name)
		if !utf8.ValidString(shown) {
			t.Fatalf("encodeName(%q) = %q is not UTF-8", name, shown)
		}
		if got := decodeName(shown); got != name {
			t.Fatalf("decodeName(encodeName(%q)) = %q", name, got)
		}
	})
}
