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

// TestLockFileReplacedWhileTaken: a lock file replaced between its opening
// and its flock (its holder released it, removing it, and another took a
// new one) is not held: the lock is taken afresh at the path, so two
// holders never both succeed.
func TestLockFileReplacedWhileTaken(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "20260805T091500-00000001"+Ext)
	t.Run("replaced and held by another", func(t *testing.T) {
		var other *Lock
		_, err := acquire(path, func() {
			if other != nil {
				return
			}
			// The file just opened is removed and a new one taken.
			var err error
			if err = os.Remove(LockPath(path)); err == nil {
				other, err = Acquire(path)
			}
			if err != nil {
				t.Fatal(err)
			}
		})
		var busy *BusyError
		if !errors.As(err, &busy) || busy.PID != os.Getpid() {
			t.Errorf("acquire of a lock file replaced and held meanwhile: %v; want busy", err)
		}
		other.Release()
	})
	t.Run("removed", func(t *testing.T) {
		if _, err := os.Create(LockPath(path)); err != nil { // a dead holder's
			t.Fatal(err)
		}
		removed := false
		l, err := acquire(path, func() {
			if !removed {
				removed = true
				os.Remove(LockPath(path))
			}
		})
		if err != nil {
			t.Fatalf("acquire of a lock file removed meanwhile: %v", err)
		}
		defer l.Release()
		// What was taken is the file at the path: nobody else gets it.
		if _, err := os.Stat(LockPath(path)); err != nil {
			t.Errorf("no lock file at the path: %v", err)
		}
		if other, err := Acquire(path); err == nil {
			other.Release()
			t.Error("two holders: a lock on a removed file was kept")
		}
	})
}
