package sessionindex

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/record/session"
)

// TestForShares: every caller of For for one store shares its Index, so
// that what one sets (StopOn, given the command's interrupt; SetBackfill)
// holds for another (sessions reindex asks For on its own).
func TestForShares(t *testing.T) {
	dir := t.TempDir()
	a := For(dir, nil)
	if b := For(filepath.Join(dir, "."), nil); b != a {
		t.Error("For of the same store, spelled with a trailing /., gave another Index")
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
