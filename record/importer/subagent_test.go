package importer

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// subagentHome writes testdata/subagents.txtar under a project directory
// and returns that directory.
func subagentHome(t *testing.T) string {
	t.Helper()
	a, err := txtar.ParseFile(filepath.Join("testdata", "subagents.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range a.Files {
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "-w")
}

// Sub-agents' files become child sessions of the session and call that
// started them, found in both of Claude Code's layouts; a file that
// answers no call is named, not imported.
func TestSubagentFiles(t *testing.T) {
	t.Parallel()
	proj := subagentHome(t)
	store := &session.Store{Dir: filepath.Join(t.TempDir(), "sessions")}
	for _, tc := range []struct {
		main     string
		calls    []string // the calls the children answer, in order
		agents   []string
		unjoined []string
	}{
		{"5a1e0c3b-8d2f-4e61-a7b9-1c2d3e4f5a6b.jsonl", []string{"toolu_v1", "toolu_v2"}, []string{"agent-a3f09c1.jsonl", "agent-b77e2d0.jsonl"},
			[]string{"agent-acompact-0c1d2e.jsonl"}},
		{"c0ffee00-1111-4222-8333-444455556666.jsonl", []string{"toolu_o1"}, []string{"agent-4d4d4d4d.jsonl"}, nil},
	} {
		src := filepath.Join(proj, tc.main)
		dry, err := File(store, ClaudeCode, src, true)
		if err != nil || dry.Status != WouldImport || len(dry.Children) != len(tc.calls) {
			t.Fatalf("%s: dry run %+v %v", tc.main, dry, err)
		}
		res, err := File(store, ClaudeCode, src, false)
		if err != nil || res.Status != Imported {
			t.Fatalf("%s: %+v %v", tc.main, res, err)
		}
		var unjoined []string
		for _, u := range res.Unjoined {
			unjoined = append(unjoined, filepath.Base(u))
		}
		if !slices.Equal(unjoined, tc.unjoined) {
			t.Errorf("%s: unjoined %v, want %v", tc.main, unjoined, tc.unjoined)
		}
		parent := session.Ref{Dir: store.Dir, ID: res.ID}
		kids, err := store.Children(parent)
		if err != nil || len(kids) != len(tc.calls) {
			t.Fatalf("%s: children %v %v, want %d", tc.main, kids, err, len(tc.calls))
		}
		for i, k := range res.Children {
			if k.Status != Imported || k.CallID != tc.calls[i] || filepath.Base(k.Source) != tc.agents[i] || k.Messages == 0 {
				t.Errorf("%s: child %d: %+v, want call %s from %s", tc.main, i, k, tc.calls[i], tc.agents[i])
			}
			s, err := store.Load(session.Ref{Dir: store.Dir, ID: k.ID})
			if err != nil {
				t.Fatal(err)
			}
			if p := s.Meta.Parent; p == nil || p.Session != res.ID || p.CallID != tc.calls[i] {
				t.Errorf("%s: child %s names parent %+v", tc.main, k.ID, s.Meta.Parent)
			}
			if f := s.Meta.ImportedFrom; f == nil || filepath.Base(f.Path) != tc.agents[i] || f.Entries == 0 {
				t.Errorf("%s: child %s imported_from %+v", tc.main, k.ID, f)
			}
		}
		again, err := File(store, ClaudeCode, src, false)
		if err != nil || again.Status != AlreadyImported || len(again.Children) != len(tc.calls) {
			t.Fatalf("%s: again %+v %v", tc.main, again, err)
		}
		for _, k := range again.Children {
			if k.Status != AlreadyImported {
				t.Errorf("%s: child imported twice: %+v", tc.main, k)
			}
		}
	}
}

// A sub-agent's file named on its own is its conversation, not an empty
// session.
func TestSubagentFileAlone(t *testing.T) {
	t.Parallel()
	proj := subagentHome(t)
	data, err := os.ReadFile(filepath.Join(proj, "agent-4d4d4d4d.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := Parse(ClaudeCode, data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Messages) != 4 || c.Title != "Read the Makefile and say what it builds." || c.SkippedTotal() != 0 || c.CreatedAt.IsZero() {
		t.Errorf("%d messages, title %q, skipped %v, created %v", len(c.Messages), c.Title, c.Skipped, c.CreatedAt)
	}
	if c.Messages[0].Role != transcript.RoleUser {
		t.Errorf("first message %+v", c.Messages[0])
	}
}
