package main

import (
	"slices"
	"strings"
	"testing"
)

const sample = `package p

import "errors"

func f(a, b int, s []int) (int, error) {
	if a < b && len(s) == 0 {
		return 0, errors.New("x")
	}
	for i := 0; i < len(s); i++ {
		a += s[i]
	}
	defer g()
	g()
	b = a
	return a, nil
}

func g() {}
`

// TestMutantsOf: each kind of mutant is found where it applies, and
// applying one changes only its bytes.
func TestMutantsOf(t *testing.T) {
	ms, err := mutantsOf("p.go", []byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range ms {
		got = append(got, m.String())
	}
	want := []string{
		"negate `a < b && len(s) == 0` -> `!(a < b && len(s) == 0)`",
		"logic `&&` -> `||`",
		"flip `<` -> `>=`",
		"boundary `<` -> `<=`",
		"flip `==` -> `!=`",
		"nil-error `errors.New(\"x\")` -> `nil`",
		"flip `<` -> `>=`",
		"boundary `<` -> `<=`",
		"delete `a += s[i]` -> ``",
		"delete `defer g()` -> ``",
		"delete `g()` -> ``",
		"delete `b = a` -> ``",
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, m := range ms {
		if m.Kind == "logic" {
			out := string(m.apply([]byte(sample)))
			if !strings.Contains(out, "if a < b || len(s) == 0 {") || len(out) != len(sample) {
				t.Errorf("applied: %s", out)
			}
			if m.Line != 6 {
				t.Errorf("line %d, want 6", m.Line)
			}
		}
	}
}

func TestCoverage(t *testing.T) {
	c, err := parseCoverage(strings.NewReader("mode: set\nexample.com/m/p/p.go:5.40,6.20 2 1\nexample.com/m/p/p.go:6.20,8.3 1 0\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		line, col int
		want      bool
	}{{5, 40, true}, {6, 5, true}, {6, 20, false}, {7, 1, false}, {9, 1, false}, {5, 39, false}} {
		if got := c.covered("p.go", tc.line, tc.col); got != tc.want {
			t.Errorf("covered(%d:%d) = %v", tc.line, tc.col, got)
		}
	}
}

func TestReadListed(t *testing.T) {
	ls, err := readListed(strings.NewReader("# a comment\nwhy: it breaks\nfile: a/b.go\nold: \"x < 1\"\nnew: \"x <= 1\"\n\nfile: a/c.go\nold: \"f()\\n\"\nnew: \"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []listed{{why: "it breaks", file: "a/b.go", old: "x < 1", new: "x <= 1"}, {file: "a/c.go", old: "f()\n"}}
	if !slices.Equal(ls, want) {
		t.Errorf("readListed = %+v, want %+v", ls, want)
	}
	for _, bad := range []string{"file: a.go\n", "old: \"x\"\n", "file: a.go\nold: x\n", "oops\n", "size: 3\n"} {
		if _, err := readListed(strings.NewReader(bad)); err == nil {
			t.Errorf("readListed(%q) accepted", bad)
		}
	}
}
