package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// A session has one writer at a time. Whatever attaches to a session to
// write in it (a run, a resumed run, a replay recording into its own new
// session) holds the session's lock for its whole life: an exclusive flock
// on a sidecar file, <id>.lock beside <id>.jsonl, holding the holder's
// pid. A second attach fails at once with a *BusyError naming that pid.
// Readers never take the lock, so listing, showing and replaying a session
// in use are never blocked. The lock is not the per-append flock the
// Writer takes on the transcript itself (a different file, so the two
// never conflict), and the kernel drops it when its process dies, however
// it dies: a session whose writer was killed can be resumed at once.

// Lock is a session held for writing.
type Lock struct {
	f    *os.File
	path string // the lock file's
}

// BusyError means another process holds the session.
type BusyError struct {
	ID  string
	PID int // 0 when the holder's pid could not be read
}

func (e *BusyError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = "process " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("session: %s is in use by %s (one writer at a time: wait for it to finish)", e.ID, who)
}

// LockPath returns the path of the lock file of the session at path.
func LockPath(path string) string { return strings.TrimSuffix(path, Ext) + ".lock" }

// Acquire takes the lock of the session at path (which need not exist
// yet: Create takes it before creating the file), or fails at once with a
// *BusyError when another process holds it.
func Acquire(path string) (*Lock, error) { return acquire(path, nil) }

// acquire is Acquire; opened, when not nil, is called between opening the
// lock file and locking it (tests use it to replace the file there).
func acquire(path string, opened func()) (*Lock, error) {
	lp := LockPath(path)
	for range 100 {
		f, err := os.OpenFile(lp, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return nil, fmt.Errorf("session: lock: %w", err)
		}
		if opened != nil {
			opened()
		}
		fd := int(f.Fd())
		if err := flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			pid := readPID(f)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &BusyError{ID: FileID(path), PID: pid}
			}
			return nil, fmt.Errorf("session: lock %s: %w", lp, err)
		}
		// A holder removes the lock file before it lets go, so the file
		// locked must still be the one at lp; if not, its holder released
		// it after we opened it, and the lock is to be taken afresh.
		var held, now syscall.Stat_t
		if syscall.Fstat(fd, &held) == nil && syscall.Stat(lp, &now) == nil && held.Dev == now.Dev && held.Ino == now.Ino {
			pid := []byte(strconv.Itoa(os.Getpid()) + "\n")
			if err := f.Truncate(0); err == nil {
				f.WriteAt(pid, 0) // only a note for whoever finds it busy
			}
			return &Lock{f: f, path: lp}, nil
		}
		f.Close()
	}
	return nil, fmt.Errorf("session: lock %s: it was replaced a hundred times while being taken", lp)
}

// readPID reads the pid a holder wrote in its lock file (0 if none).
func readPID(f *os.File) int {
	var b [24]byte
	n, _ := f.ReadAt(b[:], 0)
	pid, err := strconv.Atoi(string(bytes.TrimSpace(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

// Release lets the session go: the lock file is removed while still held
// (whoever opened it meanwhile will see it replaced and try again), then
// closed, which drops the lock. Releasing twice, or a nil lock, is
// harmless.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	rerr := os.Remove(l.path)
	cerr := l.f.Close()
	l.f = nil
	if rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		return fmt.Errorf("session: release lock: %w", rerr)
	}
	if cerr != nil {
		return fmt.Errorf("session: release lock: %w", cerr)
	}
	return nil
}
