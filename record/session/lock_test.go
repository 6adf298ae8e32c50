package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestOneWriterAtATime: a session held by Acquire, or by the writer Create
// returns, cannot be taken again until it is released; the refusal names
// the holder's pid; releasing removes the lock file.
func TestOneWriterAtATime(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w := newSession(t, dir)
	_, err := Acquire(w.Path())
	var busy *BusyError
	if !errors.As(err, &busy) || busy.PID != os.Getpid() || busy.ID != w.ID() {
		t.Fatalf("Acquire of a session being created: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := Acquire(w.Path())
	if err != nil {
		t.Fatalf("Acquire after Close: %v", err)
	}
	if _, err := Acquire(w.Path()); !errors.As(err, &busy) {
		t.Errorf("second Acquire: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(LockPath(w.Path())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lock file after Release: %v", err)
	}
	l.Release() // twice is harmless
	l2, err := Acquire(w.Path())
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	l2.Release()

	// A lock file left by a holder that died (no flock on it) is taken over.
	if err := os.WriteFile(LockPath(w.Path()), []byte("999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l3, err := Acquire(w.Path())
	if err != nil {
		t.Fatalf("Acquire over a dead holder's file: %v", err)
	}
	l3.Release()

	// A lock file that is a symlink is not followed.
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), LockPath(w.Path())); err != nil {
		t.Fatal(err)
	}
	if _, err := Acquire(w.Path()); err == nil {
		t.Error("Acquire followed a symlinked lock file")
	}
}
