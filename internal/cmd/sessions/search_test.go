package sessions

import (
	"errors"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/internal/cmdutil/cmdtest"
	"github.com/mecha-agent/mecha/session"
)

func TestSearchFlags(t *testing.T) {
	t.Parallel()
	env := &cmdutil.Env{}
	var o *SearchOptions
	if err := cmdtest.Execute(NewCmdSearch(env, func(x *SearchOptions) error { o = x; return nil }),
		"--regex", "--role", "tool", "--tool", "bash", "--days", "3", "-n", "7", "--json", "a.*b"); err != nil ||
		!o.Regex || o.Role != "tool" || o.Tool != "bash" || o.Days != 3 || o.Limit != 7 || !o.JSON || o.Query != "a.*b" {
		t.Errorf("%v %+v", err, o)
	}
	for _, args := range [][]string{{}, {""}, {"--role", "system", "x"}, {"--role", "user", "--tool", "bash", "x"}, {"--days", "-1", "x"}, {"-n", "-2", "x"}} {
		err := cmdtest.Execute(NewCmdSearch(env, func(*SearchOptions) error { t.Error("ran despite bad usage"); return nil }), args...)
		var ue *cmdutil.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
}

func TestSnippet(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("é", 50) + "\tNEEDLE\x1b[0m\n" + strings.Repeat("z", 50)
	i := strings.Index(text, "NEEDLE")
	h := toHit(session.Info{}, session.Hit{Text: text, Start: i, End: i + 6})
	if got := h.Snippet[h.Match[0]:h.Match[1]]; got != "NEEDLE" {
		t.Errorf("match %q in %q", got, h.Snippet)
	}
	if !strings.HasPrefix(h.Snippet, "…é") || !strings.HasSuffix(h.Snippet, "z…") || strings.ContainsAny(h.Snippet, "\x1b\n\t") {
		t.Errorf("snippet %q", h.Snippet)
	}
}
