package sessionindex

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
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
			aged(dir)
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

// segments reads the number of segments of the full-text index from its
// structure record (texts_data row 10: a 4-byte cookie, the 4 bytes FF 00
// 00 01 in its second version, then varints nLevel, nSegment, ...).
func segments(t *testing.T, ix *Index) int {
	t.Helper()
	ix.mu.Lock()
	db := ix.open()
	ix.mu.Unlock()
	var b []byte
	if err := db.QueryRow("SELECT block FROM texts_data WHERE id = 10").Scan(&b); err != nil {
		t.Fatal(err)
	}
	if len(b) < 4 {
		t.Fatalf("structure record of %d bytes", len(b))
	}
	b = b[4:]
	if bytes.HasPrefix(b, []byte{0xff, 0, 0, 1}) {
		b = b[4:]
	}
	_, n := binary.Uvarint(b)
	segs, m := binary.Uvarint(b[n:])
	if n <= 0 || m <= 0 {
		t.Fatal("structure record does not decode")
	}
	return int(segs)
}

// A sync that writes much text (a first indexing) merges the full-text
// index into one segment, and the index answers as the scan does before
// and after; a small sync does not merge.
func TestLargeSyncOptimizes(t *testing.T) {
	defer func(b, o int) { batchBytes, optimizeBytes = b, o }(batchBytes, optimizeBytes)
	batchBytes = 4 << 10 // many transactions, so many segments
	for _, optimizing := range []bool{false, true} {
		optimizeBytes = 1 << 40
		if optimizing {
			optimizeBytes = 64 << 10
		}
		dir := t.TempDir()
		r := rand.New(rand.NewPCG(9, 9))
		ids := genStore(t, dir, r, 80)
		ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
		checkOracle(t, dir, ix)
		segs := segments(t, ix)
		if optimizing && segs != 1 || !optimizing && segs < 2 {
			t.Fatalf("optimizing=%v: %d segments after the first indexing", optimizing, segs)
		}
		// A small catch-up: one session appended to.
		f, _ := os.OpenFile(filepath.Join(dir, ids[3]+session.Ext), os.O_APPEND|os.O_WRONLY, 0)
		f.Write([]byte("\n"))
		turns := 10
		f.Write(runBody(t, r, 3, true, &turns))
		f.Close()
		checkOracle(t, dir, ix)
		if after := segments(t, ix); optimizing && after < 2 {
			t.Errorf("a small sync merged the index (%d segments)", after)
		}
		ix.mu.Lock()
		_, err := ix.open().Exec("INSERT INTO texts(texts) VALUES('integrity-check')")
		ix.mu.Unlock()
		if err != nil {
			t.Errorf("integrity-check: %v", err)
		}
		ix.Close()
	}
}

// TestSearchAfterTheIndexWasRemade: a snapshot left from a database that
// was since made again (another process rebuilt a damaged index, or
// `sessions reindex` ran between the snapshot and the query): the search
// finds the database is not the one its snapshot was made from, makes the
// snapshot again from the new one, and answers as the scan does; and the
// snapshot it wrote, made while holding entries read without their
// summaries, gives the stats the scan's summaries. Both ways a search
// checks the files: by the snapshot's names (the directory as the snapshot
// recorded it) and by reading the directory (a snapshot that recorded none).
func TestSearchAfterTheIndexWasRemade(t *testing.T) {
	for _, recorded := range []bool{true, false} {
		t.Run(fmt.Sprintf("directory recorded %v", recorded), func(t *testing.T) {
			dir := t.TempDir()
			genStore(t, dir, rand.New(rand.NewPCG(21, 22)), 40)
			os.MkdirAll(filepath.Join(dir, ".index"), 0o700)
			old := time.Now().Add(-time.Hour)
			if recorded {
				os.Chtimes(dir, old, old)
			}
			path := filepath.Join(dir, Name)
			first := &Index{dir: dir, path: path}
			if _, err := first.List(); err != nil {
				t.Fatal(err)
			}
			first.Close()
			list, err := os.ReadFile(first.listPath())
			if err != nil {
				t.Fatal(err)
			}
			if snap := first.readSnapshot(readEntries, 0); snap == nil || (snap.dirMtime != 0) != recorded {
				t.Fatalf("the first snapshot: %v", snap)
			}
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Remove(path + suffix)
			}
			again := &Index{dir: dir, path: path}
			if _, err := again.Reindex(); err != nil {
				t.Fatal(err)
			}
			again.Close()
			// The snapshot of the first database, over files it still
			// matches.
			if err := os.WriteFile(first.listPath(), list, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(dir, old, old)
			ix := &Index{dir: dir, path: path}
			scan := &session.Store{Dir: dir}
			wl, err := scan.List()
			if err != nil {
				t.Fatal(err)
			}
			q := session.NewLiteralQuery("needle")
			want := searchAll(t, scan, wl.Sessions, q, nil)
			n, narrowed, err := ix.Candidates(q)
			if err != nil || !narrowed {
				t.Fatalf("candidates: narrowed %v, %v", narrowed, err)
			}
			if got := searchAll(t, scan, wl.Sessions, q, n.Lines); !reflect.DeepEqual(got, want) || len(want) == 0 {
				t.Errorf("search after the index was made again:\ngot  %v\nwant %v", got, want)
			}
			var id uint64
			if err := ix.open().QueryRow("SELECT id FROM ident").Scan(&id); err != nil {
				t.Fatal(err)
			}
			if snap := ix.readSnapshot(readEntries, 0); snap == nil || snap.db != id {
				t.Fatal("the search did not make the snapshot again from the database as it is")
			}
			checkOracle(t, dir, &Index{dir: dir, path: path})
		})
	}
}
