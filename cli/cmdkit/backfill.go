package cmdkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/mecha-agent/mecha/record/sessionindex"
)

// BackfillLock is the file, under the store's .index directory, that the
// process building the index in the background holds locked (flock) while
// it runs: one at a time, and none left holding it when killed.
const BackfillLock = "backfill.lock"

// BackfillLog is where that process writes what goes wrong, beside it.
const BackfillLog = "backfill.log"

// backfill is sessionindex.Index.SetBackfill's start for the store in
// dir: a command that finds a large indexing to do (a first indexing of a
// big store: a minute a gigabyte) starts "mecha sessions reindex
// --background" in a session of its own, at a low priority, and reads the
// transcripts this time, as git starts its automatic gc in the
// background; while that process runs, every command reads the
// transcripts, and says so once. nil when mecha's executable is unknown.
func (e *Env) backfill(dir string) func(files int, bytes int64) bool {
	if e.Executable == nil {
		return nil
	}
	return func(files int, bytes int64) bool {
		idx := filepath.Join(dir, filepath.Dir(sessionindex.Name))
		if err := os.MkdirAll(idx, 0o700); err != nil {
			return false // the reader indexes, or says why it cannot
		}
		running, err := Locked(filepath.Join(idx, BackfillLock))
		if err != nil {
			return false
		}
		if running {
			fmt.Fprintf(e.Err, "mecha: the session index is being built in the background; reading the transcripts meanwhile\n")
			return true
		}
		exe, err := e.Executable()
		if err != nil {
			return false
		}
		logf, err := os.OpenFile(filepath.Join(idx, BackfillLog), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return false
		}
		defer logf.Close()
		cmd := exec.Command(exe, "sessions", "reindex", "--background")
		cmd.Args[0] = "mecha"
		cmd.Env = append(os.Environ(), "MECHA_SESSION_DIR="+dir)
		cmd.Dir = "/"
		cmd.Stderr = logf
		// Its own session: no terminal, so neither the shell's hangup nor
		// the person's Ctrl-C in this one reaches it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			return false
		}
		pid := cmd.Process.Pid
		cmd.Process.Release()
		fmt.Fprintf(e.Err, "mecha: indexing %d sessions (%.1f MB) in the background (process %d), this once; until it ends, commands read the transcripts\n",
			files, float64(bytes)/(1<<20), pid)
		return true
	}
}

// Locked reports whether another process holds the flock on path (a
// missing file: nobody).
func Locked(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	return false, nil // closing the file releases the lock just taken
}
