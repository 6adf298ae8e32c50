package sessionindex

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

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
