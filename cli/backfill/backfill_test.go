package backfill

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mecha-agent/mecha/record/sessionindex"
)

// TestBackfillWhileOneRuns: while a background indexing holds the lock,
// a command that finds the indexing to do starts no other one: it says so
// once and reads the transcripts. Once the lock is free it starts one (here
// it cannot: mecha's executable is unknown to the test, so it declines and
// the command indexes itself).
func TestBackfillWhileOneRuns(t *testing.T) {
	dir := t.TempDir()
	idx := filepath.Join(dir, filepath.Dir(sessionindex.Name))
	if err := os.MkdirAll(idx, 0o700); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(filepath.Join(idx, Lock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	started := 0
	start := Starter(dir, func() (string, error) { started++; return "", errors.New("no executable in this test") }, nil, &stderr)
	if !start(10000, 1<<30) {
		t.Fatal("with the lock held, the command indexes itself")
	}
	if started != 0 {
		t.Errorf("another background indexing was started")
	}
	if got := stderr.String(); !strings.Contains(got, "being built in the background") || strings.Count(got, "\n") != 1 {
		t.Errorf("said %q", got)
	}
	syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	stderr.Reset()
	if start(10000, 1<<30) {
		t.Error("with the lock free and no executable, the command reads the transcripts")
	}
	if started != 1 || stderr.Len() != 0 {
		t.Errorf("with the lock free: %d starts, said %q", started, stderr.String())
	}
	if held, err := Locked(filepath.Join(idx, Lock)); err != nil || held {
		t.Errorf("Locked after the release: %v, %v", held, err)
	}
}
