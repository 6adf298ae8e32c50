// Package backfill indexes a large session store in the background: a
// command that finds a large indexing to do (sessionindex.SetBackfill)
// starts "mecha sessions reindex --background" and reads the transcripts
// meanwhile, as git starts its automatic gc in the background, rather than
// making the person wait a minute a gigabyte; Run is that process.
package backfill

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/mecha-agent/mecha/record/sessionindex"
)

// Lock is the file, under the store's .index directory, that the
// process building the index in the background holds locked (flock) while
// it runs: one at a time, and none left holding it when killed.
const Lock = "backfill.lock"

// Log is where that process writes what it says, beside it.
const Log = "backfill.log"

// Starter is sessionindex.Index.SetBackfill's start for the store in dir
// (absolute): it starts "mecha sessions reindex --background" (mecha being
// exe, with the environment env and MECHA_SESSION_DIR set to dir) in a
// session of its own, says so in one line on stderr, and returns
// true, for the command to read the transcripts this time; while that
// process runs, it starts no other one and says so. It returns false (the
// command indexes in place) when it cannot start one.
func Starter(dir string, exe func() (string, error), env []string, stderr io.Writer) func(files int, bytes int64) bool {
	return func(files int, bytes int64) bool {
		idx := filepath.Join(dir, filepath.Dir(sessionindex.Name))
		if err := os.MkdirAll(idx, 0o700); err != nil {
			return false // the reader indexes, or says why it cannot
		}
		running, err := Locked(filepath.Join(idx, Lock))
		if err != nil {
			return false
		}
		if running {
			fmt.Fprintf(stderr, "mecha: the session index is being built in the background; reading the transcripts meanwhile\n")
			return true
		}
		path, err := exe()
		if err != nil {
			return false
		}
		logf, err := os.OpenFile(filepath.Join(idx, Log), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return false
		}
		defer logf.Close()
		cmd := exec.Command(path, "sessions", "reindex", "--background")
		cmd.Args[0] = "mecha"
		cmd.Env = append(append([]string(nil), env...), "MECHA_SESSION_DIR="+dir)
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
		fmt.Fprintf(stderr, "mecha: indexing %d sessions (%.1f MB) in the background (process %d), this once; until it ends, commands read the transcripts\n",
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

// Run is the background indexing of the store in dir: one process at a
// time holds the lock (one started meanwhile returns at once, ran false),
// at a low priority, and brings the index in step (CatchUp), keeping what
// an interrupted one indexed: the number of sessions it lists.
func Run(dir string, warn func(string)) (n int, ran bool, err error) {
	idx := filepath.Join(dir, filepath.Dir(sessionindex.Name))
	if err := os.MkdirAll(idx, 0o700); err != nil {
		return 0, false, err
	}
	f, err := os.OpenFile(filepath.Join(idx, Lock), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return 0, false, err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return 0, false, nil // another one runs
	}
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
	n, err = sessionindex.For(dir, warn).CatchUp()
	return n, true, err
}
