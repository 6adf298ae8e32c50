package sessionindex

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// A search queries the index while it checks the files (Candidates): when
// a session changes in between, after the query read the database, the
// query's answer is stale and must not be used.
func TestSearchWhileASessionChanges(t *testing.T) {
	for _, other := range []bool{false, true} {
		name := "indexed by this reader"
		if other {
			name = "indexed by another process meanwhile"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ids := genStore(t, dir, rand.New(rand.NewPCG(5, 7)), 30)
			os.MkdirAll(filepath.Join(dir, ".index"), 0o700)
			old := time.Now().Add(-time.Hour)
			os.Chtimes(dir, old, old)
			ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
			if _, err := ix.List(); err != nil {
				t.Fatal(err)
			}
			q := session.NewLiteralQuery("zebracorn")
			if n, ok, err := ix.Candidates(q); err != nil || !ok || len(n.Sessions) != 0 {
				t.Fatalf("before: %v %v %v", n, ok, err)
			}
			victim := ids[7]
			changed := false
			testHookSpeculating = func(s *speculation) {
				<-s.done // the query read the database as it was
				if s.err != nil || len(s.lines) != 0 {
					t.Errorf("the query ahead: %v %v", s.lines, s.err)
				}
				path := filepath.Join(dir, victim+session.Ext)
				b, _ := os.ReadFile(path)
				f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
				if len(b) > 0 && b[len(b)-1] != '\n' {
					f.Write([]byte("\n"))
				}
				f.Write(encode(t, &transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("the zebracorn grazes")}}))
				f.Close()
				if other {
					// Another process brings the index in step and
					// writes the snapshot again.
					o := &Index{dir: dir, path: filepath.Join(dir, Name)}
					if _, err := o.List(); err != nil {
						t.Error(err)
					}
					o.Close()
				}
				changed = true
			}
			defer func() { testHookSpeculating = nil }()
			n, ok, err := ix.Candidates(q)
			testHookSpeculating = nil
			if !changed {
				t.Fatal("the search made no query ahead")
			}
			if err != nil || !ok {
				t.Fatalf("after: %v %v", ok, err)
			}
			if len(n.Sessions) != 1 || n.Sessions[0].Ref.ID != victim || len(n.Lines[victim]) != 1 {
				t.Fatalf("after the change the search names %v (%v), want %s", n.Sessions, n.Lines, victim)
			}
			// And the next search, with nothing changed, answers from its
			// query ahead.
			if n, _, _ := ix.Candidates(q); len(n.Sessions) != 1 {
				t.Fatalf("the next search names %v", n.Sessions)
			}
			ix.Close()
		})
	}
}
