package cmdkit

import (
	"bytes"
	"strings"
	"testing"
)

func TestPagerNotOnATerminal(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	env := &Env{Out: &out, Vars: func(string) string { return "cat" }}
	p := env.StartPager()
	if p.Out != &out || p.cmd != nil || p.Close(nil) != nil {
		t.Error("a pager started for output that is not a terminal")
	}
}

// TestPagerDefault: with $PAGER unset the pager is "less -R", looked up
// on the Env's $PATH; one that is not found is a note, and the output is
// written directly.
func TestPagerDefault(t *testing.T) {
	t.Parallel()
	var out, errs bytes.Buffer
	vars := map[string]string{"PATH": t.TempDir()}
	env := &Env{Out: &out, Err: &errs, OutTTY: true, Vars: func(k string) string { return vars[k] }}
	p := env.StartPager()
	if p.Out != &out || p.cmd != nil {
		t.Fatal("a pager started although none is on $PATH")
	}
	if want := `note: the pager "less -R" did not start (less: not found in $PATH); writing directly`; strings.TrimSpace(errs.String()) != want {
		t.Errorf("note %q, want %q", errs.String(), want)
	}
}
