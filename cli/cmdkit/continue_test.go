package cmdkit

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestContinueID: --continue picks the newest session a person ran in the
// workspace asked for, whatever path reaches it, passing over every newer
// session of another kind there; "last" (the control) picks the newest
// of any kind.
func TestContinueID(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	sessions := filepath.Join(top, "sessions")
	ws1, ws2 := filepath.Join(top, "ws1"), filepath.Join(top, "ws2")
	link := filepath.Join(top, "link-to-ws2")
	for _, d := range []string{ws1, ws2} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(ws2, link); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	store := &session.Store{Dir: sessions}
	create := func(m transcript.Meta) session.Ref {
		t.Helper()
		at = at.Add(time.Minute)
		m.CreatedAt = at
		w, err := store.Create(m)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		return w.Ref()
	}
	run1 := create(transcript.Meta{Provider: "mock", Workspace: ws1 + "/", Title: "run 1"})
	run2 := create(transcript.Meta{Provider: "mock", Workspace: link, Title: "run 2 (recorded through a link)"})
	create(transcript.Meta{Provider: "mock", Workspace: ws1, ReplayOf: "x"})
	create(transcript.Meta{Provider: "rerun", Workspace: ws1, RerunOf: "x"})
	create(transcript.Meta{Provider: "mock", Workspace: ws1, ReflectsOn: "x"})
	create(transcript.Meta{Provider: "mock", Workspace: ws1, Distill: true})
	create(transcript.Meta{Provider: "mock", Workspace: ws1, ImportedFrom: &transcript.ImportedFrom{Harness: "codex"}})
	create(transcript.Meta{Provider: "mcp", Workspace: ws1, Title: "mcp serve"})
	create(transcript.Meta{Provider: "mcp", Workspace: ws1, MCPClient: &transcript.MCPPeer{Name: "claude"}})
	newest := create(transcript.Meta{Provider: "mock", Workspace: ws1, Parent: &transcript.ParentCall{Session: "x", CallID: "c"}})
	env := &Env{Vars: func(k string) string {
		if k == "MECHA_SESSION_DIR" {
			return sessions
		}
		return ""
	}}
	for _, tc := range []struct {
		dir  string
		want session.Ref
	}{
		{ws1, run1},
		{ws2, run2},
		{link, run2},
		{filepath.Join(ws1, "..", "ws1"), run1},
	} {
		if got, err := env.ContinueID(tc.dir); got != tc.want || err != nil {
			t.Errorf("ContinueID(%s) = %s, %v; want %s", tc.dir, got.ID, err, tc.want.ID)
		}
	}
	if got, err := env.ResolveSession(session.Last); got != newest || err != nil {
		t.Errorf("last = %s, %v; want the newest of any kind, %s", got.ID, err, newest.ID)
	}
	empty := filepath.Join(top, "empty")
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := env.ContinueID(empty)
	if !errors.Is(err, session.ErrNotFound) || !strings.Contains(err.Error(), "no session to continue in the workspace "+empty) {
		t.Errorf("err %v", err)
	}
	if _, err := env.ContinueID(filepath.Join(top, "gone")); err == nil || !strings.Contains(err.Error(), "workspace: ") {
		t.Errorf("a missing workspace: err %v", err)
	}
}
