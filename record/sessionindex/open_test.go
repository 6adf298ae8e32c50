package sessionindex

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestForShares: every caller of For for one store shares its Index, so
// that what one sets (StopOn, given the command's interrupt; SetBackfill)
// holds for another (sessions reindex asks For on its own).
func TestForShares(t *testing.T) {
	dir := t.TempDir()
	a := For(dir, nil)
	for _, spelled := range []string{dir + "/.", dir + "/x/..", dir + "//"} {
		if b := For(spelled, nil); b != a {
			t.Errorf("For of the same store spelled %q gave another Index", spelled)
		}
	}
	stop := make(chan struct{})
	a.StopOn(stop)
	close(stop)
	if !For(dir, nil).interrupted() {
		t.Error("StopOn through one caller's Index is not seen through another's")
	}
	if c := For(t.TempDir(), nil); c == a {
		t.Error("two stores share an Index")
	}
}

// TestAppendIsPatched: a reader that finds a few sessions changed brings
// only those in step and patches the snapshot (what keeps the first
// listing after an append near an unchanged one's cost); it does not make
// the snapshot again from the whole database. Its answers are the scan's.
func TestAppendIsPatched(t *testing.T) {
	dir := t.TempDir()
	ids := genStore(t, dir, rand.New(rand.NewPCG(11, 12)), 40)
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	checkOracle(t, dir, ix)
	rebuilt := 0
	testHookRebuilding = func() { rebuilt++ }
	defer func() { testHookRebuilding = nil }()
	appended := 0
	for _, id := range ids[:6] {
		path := filepath.Join(dir, id+session.Ext)
		b, err := os.ReadFile(path)
		if err != nil || len(b) == 0 || b[len(b)-1] != '\n' {
			continue // a torn tail: completing it is TestOracle's
		}
		f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(`{"record":"message","role":"user","content":[{"type":"text","text":"one more needle"}]}` + "\n")
		f.Close()
		appended++
	}
	if appended == 0 {
		t.Fatal("no session to append to: every one ends torn")
	}
	checkOracle(t, dir, ix)
	if rebuilt != 0 {
		t.Errorf("an append to a few sessions made the snapshot again from the database %d times, not patched", rebuilt)
	}
}

// TestSummariesInBinary: the summaries mecha writes are kept in the
// snapshot in binary (what stats decodes fastest), and give back what
// decoding the record gives; one whose time is not in UTC is kept as
// written.
func TestSummariesInBinary(t *testing.T) {
	for _, tc := range []struct {
		rec    string
		binary bool
	}{
		{`{"record":"summary","usage":{"input_tokens":1200,"output_tokens":340,"cache_read_tokens":5,"cache_write_tokens":7},"turns":3,"provider":"anthropic","model":"claude-opus-5","stop_reason":"end_turn","at":"2026-11-30T10:00:03.5Z","context_tokens":900,"session_turns":4}`, true},
		{`{"record":"summary","usage":{"input_tokens":1,"output_tokens":2},"turns":1,"provider":"mock","model":"m","error":"boom"}`, true},
		{`{"record":"summary","usage":{"input_tokens":1,"output_tokens":2},"turns":1,"provider":"mock","model":"m","at":"2026-11-30T10:00:03+02:00"}`, false},
	} {
		b, ok := binarySummary(tc.rec)
		if ok != tc.binary {
			t.Errorf("binary %v, want %v, for %s", ok, tc.binary, tc.rec)
			continue
		}
		want, err := transcript.Decode([]byte(tc.rec))
		if err != nil {
			t.Fatal(err)
		}
		x := &entry{sums: encodeSums([]string{tc.rec})}
		got, err := x.summaries()
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("%s: summaries gave %+v, %v; want %+v", tc.rec, got, err, want)
		}
		if ok && len(b) >= len(tc.rec) {
			t.Errorf("binary form of %d bytes for a record of %d", len(b), len(tc.rec))
		}
	}
}

// TestStatementsPreparedOnce: a transaction prepares each statement once
// (modernc's driver would parse the SQL again at every insert: a sixth of
// a first indexing's CPU).
func TestStatementsPreparedOnce(t *testing.T) {
	db, err := openDB(filepath.Join(t.TempDir(), Name))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	x := &txn{tx: tx}
	a, err := x.prepared("SELECT 1")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := x.prepared("SELECT 1"); err != nil || b != a {
		t.Errorf("the same statement prepared twice in one transaction (%v)", err)
	}
	if c, err := x.prepared("SELECT 2"); err != nil || c == a {
		t.Errorf("another statement given the first's (%v)", err)
	}
}

// TestEachStatFieldChecked: a file is brought in step when any one of its
// size, mtime and inode differs from what was indexed, the two others
// unchanged: an append within the mtime's tick (the size alone), a byte
// changed in place (the mtime alone), a file replaced by another of the
// same size and mtime (the inode alone).
func TestEachStatFieldChecked(t *testing.T) {
	const head = `{"record":"meta","format":1,"id":"%s","created_at":"2026-01-01T00:00:00Z","provider":"mock","model":"m","workspace":"/w","title":"t"}` + "\n"
	line := func(word string) string {
		return `{"record":"message","role":"user","content":[{"type":"text","text":"find the ` + word + `"}]}` + "\n"
	}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string, st os.FileInfo)
	}{
		{"size", func(t *testing.T, path string, st os.FileInfo) { appendWithinTick(t, path, st, line("quoll")) }},
		{"mtime", func(t *testing.T, path string, st os.FileInfo) { overwriteLater(t, path, st, "zebra", "quoll") }},
		{"inode", func(t *testing.T, path string, st os.FileInfo) {
			b, _ := os.ReadFile(path)
			b = bytes.Replace(b, []byte("zebra"), []byte("quoll"), 1)
			tmp := path + ".new"
			if err := os.WriteFile(tmp, b, 0o600); err != nil {
				t.Fatal(err)
			}
			os.Chtimes(tmp, st.ModTime(), st.ModTime())
			if err := os.Rename(tmp, path); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			id := "20260101T000000-0000abcd"
			path := filepath.Join(dir, id+session.Ext)
			if err := os.WriteFile(path, []byte(fmt.Sprintf(head, id)+line("zebra")), 0o600); err != nil {
				t.Fatal(err)
			}
			// The directory older than the snapshot, as a store's usually is.
			old := aged(dir)
			ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
			store := &session.Store{Dir: dir, Index: ix}
			if _, err := store.List(); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, path, st)
			os.Chtimes(dir, old, old)
			n, narrowed, err := ix.Candidates(session.NewLiteralQuery("quoll"))
			if err != nil || !narrowed {
				t.Fatalf("candidates: narrowed %v, %v", narrowed, err)
			}
			if len(n.Sessions) != 1 || n.Sessions[0].Ref.ID != id {
				t.Errorf("the index did not see the change of the %s alone: candidates %v", tc.name, n.Sessions)
			}
		})
	}
}

// appendWithinTick appends line to the file at path and gives it back
// the mtime it had (st's): its size alone changes, as an append within the
// clock's tick leaves it.
func appendWithinTick(t *testing.T, path string, st os.FileInfo, line string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line)
	f.Close()
	os.Chtimes(path, st.ModTime(), st.ModTime())
}

// overwriteLater writes now, of the same length, over the last old in the
// file at path, and moves its mtime a second past st's: its mtime alone
// changes.
func overwriteLater(t *testing.T, path string, st os.FileInfo, old, now string) {
	t.Helper()
	b, _ := os.ReadFile(path)
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte(now), int64(bytes.LastIndex(b, []byte(old))))
	f.Close()
	later := st.ModTime().Add(time.Second)
	os.Chtimes(path, later, later)
}

// writeSmallStore writes n sessions of two records each, with titles long
// enough that the snapshot's blocks of a few hundred pass headBytes.
func writeSmallStore(t *testing.T, dir string, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		id := fmt.Sprintf("20260101T%06d-%08x", i%240000, i)
		rec := fmt.Sprintf(`{"record":"meta","format":1,"id":%q,"created_at":"2026-01-01T00:00:00Z","provider":"mock","model":"m","workspace":"/w","title":"session %d of a store whose snapshot is read in two parts, the header first"}`+"\n"+
			`{"record":"message","role":"user","content":[{"type":"text","text":"find the zebra"}]}`+"\n", id, i)
		if err := os.WriteFile(filepath.Join(dir, id+session.Ext), []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// TestSnapshotReadInParts: a listing reads the snapshot's first
// headBytes, then the rest of its blocks: what it read first is kept, and
// the whole is believed (nothing said, the scan's answers).
func TestSnapshotReadInParts(t *testing.T) {
	dir := t.TempDir()
	writeSmallStore(t, dir, 1200)
	(&Index{dir: dir, path: filepath.Join(dir, Name)}).List()
	snap := (&Index{dir: dir, path: filepath.Join(dir, Name)}).readSnapshot(readHead, 1)
	if st, err := os.Stat(filepath.Join(dir, ".index", ListName)); err != nil || st.Size() < 2*headBytes || snap == nil || len(snap.entries) >= 1200 {
		t.Fatalf("the snapshot is not read in parts: %v", err)
	}
	var said bytes.Buffer
	var mu sync.Mutex
	ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
	wl, err1 := (&session.Store{Dir: dir}).List()
	gl, err2 := (&session.Store{Dir: dir, Index: ix}).List()
	if err1 != nil || err2 != nil || !reflect.DeepEqual(infos(gl.Sessions), infos(wl.Sessions)) {
		t.Errorf("the listing differs from the scan's (%v, %v)", err1, err2)
	}
	if said.Len() != 0 {
		t.Errorf("said %q", said.String())
	}
}

// TestRebuildReusesOnlyUnchangedEntries: when so many sessions changed
// that the snapshot is made again, it reuses the old entries of the files
// that did not change only: a summary appended within the mtime's tick
// (the size alone differs) is counted.
func TestRebuildReusesOnlyUnchangedEntries(t *testing.T) {
	dir := t.TempDir()
	ids := writeSmallStore(t, dir, 100)
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	checkOracle(t, dir, ix)
	rebuilt := 0
	testHookRebuilding = func() { rebuilt++ }
	defer func() { testHookRebuilding = nil }()
	for _, id := range ids[:95] {
		path := filepath.Join(dir, id+session.Ext)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		appendWithinTick(t, path, st, `{"record":"summary","usage":{"input_tokens":7,"output_tokens":3},"turns":1,"provider":"mock","model":"m"}`+"\n")
	}
	checkOracle(t, dir, ix)
	if rebuilt == 0 {
		t.Error("95 of 100 sessions changed, and the snapshot was patched, not made again")
	}
}

// TestReopenAfterClose: a closed index opens again when next read, quietly
// (a closed database is not taken for a broken index).
func TestReopenAfterClose(t *testing.T) {
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(13, 14)), 20)
	var said bytes.Buffer
	var mu sync.Mutex
	ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warnTo(&said, &mu)}
	checkOracle(t, dir, ix)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
	checkOracle(t, dir, ix)
	if said.Len() != 0 {
		t.Errorf("said %q", said.String())
	}
}

// TestLimitedStatsCheckEachField: stats with a limit answer from the
// snapshot's first sessions after stat'ing only those; each is taken as
// changed when its size alone (a summary appended within the mtime's
// tick) or its mtime alone (a summary's stop reason changed in place,
// the same length) differs from what was indexed, and the totals are the
// scan's.
func TestLimitedStatsCheckEachField(t *testing.T) {
	const head = `{"record":"meta","format":1,"id":"%s","created_at":"2026-01-01T00:00:00Z","provider":"mock","model":"m","workspace":"/w","title":"t"}` + "\n" +
		`{"record":"message","role":"user","content":[{"type":"text","text":"hello"}]}` + "\n" +
		`{"record":"summary","usage":{"input_tokens":1,"output_tokens":2},"turns":1,"provider":"mock","model":"m","stop_reason":"end_turn"}` + "\n"
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, path string, st os.FileInfo)
	}{
		{"size", func(t *testing.T, path string, st os.FileInfo) {
			appendWithinTick(t, path, st, `{"record":"summary","usage":{"input_tokens":5,"output_tokens":6},"turns":4,"provider":"mock","model":"m","stop_reason":"max_tokens"}`+"\n")
		}},
		{"mtime", func(t *testing.T, path string, st os.FileInfo) { overwriteLater(t, path, st, "end_turn", "tool_use") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var path string
			for i := range 3 {
				id := fmt.Sprintf("20260101T00000%d-0000abcd", i)
				path = filepath.Join(dir, id+session.Ext) // the newest last
				if err := os.WriteFile(path, []byte(fmt.Sprintf(head, id)), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			old := aged(dir)
			ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
			scan, idx := &session.Store{Dir: dir}, &session.Store{Dir: dir, Index: ix}
			if _, err := idx.List(); err != nil {
				t.Fatal(err)
			}
			if snap := ix.readSnapshot(readEntries, 0); snap == nil || snap.dirMtime == 0 {
				t.Fatal("the snapshot does not record the directory: stats would not take the quick way")
			}
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			tc.change(t, path, st)
			os.Chtimes(dir, old, old)
			want, _, err1 := scan.Totals(nil, 1)
			got, _, err2 := idx.Totals(nil, 1)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(totalsOf(got), totalsOf(want)) {
				t.Errorf("stats -n 1 after a change of the %s alone: %v %v\nindex %v\nscan  %v", tc.name, err1, err2, totalsOf(got), totalsOf(want))
			}
		})
	}
}

// TestShort: an error's text on one line, whole up to 120 characters,
// past them clipped to 119 and a mark, and never cut inside a character.
func TestShort(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"disk  I/O\n\terror", "disk I/O error"},
		{strings.Repeat("a", 120), strings.Repeat("a", 120)},
		{strings.Repeat("a", 121), strings.Repeat("a", 119) + "…"},
		{strings.Repeat("é", 120), strings.Repeat("é", 120)},
		{"/home/" + strings.Repeat("日", 130), "/home/" + strings.Repeat("日", 113) + "…"},
	} {
		got := short(errors.New(tc.in))
		if got != tc.want || !utf8.ValidString(got) {
			t.Errorf("short(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestLimitedStatsOverALargeStore: stats with a limit over a store of more
// sessions than decodeTotals decodes in parallel (4096) give the newest
// limit sessions, as the scan does, both from the snapshot's first blocks
// (the directory as the snapshot recorded it) and from all its entries
// (a directory changed within the last two seconds, not recorded).
func TestLimitedStatsOverALargeStore(t *testing.T) {
	dir := t.TempDir()
	writeSmallStore(t, dir, 4200)
	os.MkdirAll(filepath.Join(dir, ".index"), 0o700)
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	scan, idx := &session.Store{Dir: dir}, &session.Store{Dir: dir, Index: ix}
	for _, recorded := range []bool{false, true} {
		if recorded {
			old := time.Now().Add(-time.Hour)
			os.Chtimes(dir, old, old)
			if _, err := idx.List(); err != nil { // records the directory
				t.Fatal(err)
			}
		}
		if snap := ix.readSnapshot(readEntries, 0); snap != nil && (snap.dirMtime != 0) != recorded {
			t.Fatalf("the snapshot records the directory: %v, want %v", snap.dirMtime != 0, recorded)
		}
		for _, limit := range []int{1, 3, 50} {
			want, _, err1 := scan.Totals(nil, limit)
			got, _, err2 := idx.Totals(nil, limit)
			if err1 != nil || err2 != nil || len(want) != limit || !reflect.DeepEqual(totalsOf(got), totalsOf(want)) {
				t.Errorf("directory recorded %v, stats -n %d: %v %v: %d sessions, the scan's %d", recorded, limit, err1, err2, len(got), len(want))
			}
		}
	}
}

// TestUnchangedStoreWritesNothing: over a store that did not change, a
// listing, stats and a search each answer from the snapshot as it is:
// nothing is brought in step and the snapshot is not written again (its
// file is the same one, untouched).
func TestUnchangedStoreWritesNothing(t *testing.T) {
	dir := t.TempDir()
	genStore(t, dir, rand.New(rand.NewPCG(25, 26)), 40)
	aged(dir)
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	idx := &session.Store{Dir: dir, Index: ix}
	if _, err := idx.List(); err != nil {
		t.Fatal(err)
	}
	before, err := os.Stat(ix.listPath())
	if err != nil {
		t.Fatal(err)
	}
	rebuilt := false
	testHookRebuilding = func() { rebuilt = true }
	defer func() { testHookRebuilding = nil }()
	for _, read := range []func() error{
		func() error { _, err := idx.List(); return err },
		func() error { _, _, err := idx.Totals(nil, 0); return err },
		func() error { _, _, err := idx.Totals(nil, 2); return err },
		func() error { _, _, err := ix.Candidates(session.NewLiteralQuery("needle")); return err },
	} {
		if err := read(); err != nil {
			t.Fatal(err)
		}
	}
	after, err := os.Stat(ix.listPath())
	if err != nil {
		t.Fatal(err)
	}
	if rebuilt || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("reading an unchanged store wrote the index: rebuilt %v, the snapshot the same file %v, its mtime %v then %v",
			rebuilt, os.SameFile(before, after), before.ModTime(), after.ModTime())
	}
}
