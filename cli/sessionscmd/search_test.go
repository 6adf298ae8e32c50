package sessionscmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestSearchFlags(t *testing.T) {
	t.Parallel()
	env := &cmdkit.Env{}
	var o *SearchOptions
	if err := cmdtest.Execute(NewCmdSearch(env, func(x *SearchOptions) error { o = x; return nil }),
		"--regex", "--role", "tool", "--tool", "bash", "--days", "3", "-n", "7", "--json", "a.*b"); err != nil ||
		!o.Regex || o.Role != "tool" || o.Tool != "bash" || o.Days != 3 || o.Limit != 7 || !o.JSON || o.Query != "a.*b" {
		t.Errorf("%v %+v", err, o)
	}
	for _, args := range [][]string{{}, {""}, {"--role", "system", "x"}, {"--role", "user", "--tool", "bash", "x"}, {"--days", "-1", "x"}, {"-n", "-2", "x"}} {
		err := cmdtest.Execute(NewCmdSearch(env, func(*SearchOptions) error { t.Error("ran despite bad usage"); return nil }), args...)
		var ue *cmdkit.UsageError
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

// TestSearchRunOrder runs the search over many sessions on several workers:
// matches come out newest session first, -n stops at N, and --json is one
// object a line.
func TestSearchRunOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 40 {
		id := fmt.Sprintf("202608%02dT091500-%08x", 1+i%28, i)
		body := fmt.Sprintf(`{"record":"meta","format":1,"id":%q,"created_at":"2026-08-%02dT09:15:%02dZ","provider":"m","model":"m","workspace":"/w","title":"t%d"}`+"\n", id, 1+i%28, i, i)
		for range 3 {
			body += `{"record":"message","role":"user","content":[{"type":"text","text":"the needle"}]}` + "\n"
		}
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	run := func(opts SearchOptions) []searchHit {
		var out bytes.Buffer
		opts.Env = &cmdkit.Env{Out: &out, Err: io.Discard, Vars: func(k string) string {
			if k == "MECHA_SESSION_DIR" {
				return dir
			}
			return ""
		}}
		opts.JSON = true
		if err := searchRun(&opts); err != nil {
			t.Fatal(err)
		}
		var hits []searchHit
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			var h searchHit
			if err := json.Unmarshal([]byte(line), &h); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			hits = append(hits, h)
		}
		return hits
	}
	l, err := (&session.Store{Dir: dir}).List()
	if err != nil {
		t.Fatal(err)
	}
	hits := run(SearchOptions{Query: "needle"})
	if len(hits) != 120 {
		t.Fatalf("%d hits, want 120", len(hits))
	}
	for i, h := range hits {
		if want := l.Sessions[i/3].Meta.ID; h.ID != want || h.Line != 2+i%3 {
			t.Fatalf("hit %d is %s:%d, want %s:%d", i, h.ID, h.Line, want, 2+i%3)
		}
	}
	if hits := run(SearchOptions{Query: "needle", Limit: 5}); len(hits) != 5 || hits[4].ID != l.Sessions[1].Meta.ID {
		t.Errorf("-n 5: %+v", hits)
	}
}

func TestMark(t *testing.T) {
	t.Parallel()
	if got := mark(textfmt.Style{}, "x"); got != "»x«" {
		t.Errorf("off a terminal: %q", got)
	}
	if got := mark(textfmt.Style{On: true}, "x"); !strings.Contains(got, "\x1b[31mx\x1b[0m") || strings.ContainsAny(got, "»«") {
		t.Errorf("on a terminal: %q", got)
	}
}
