// Package backfill indexes a large session store in the background: a
// command that finds a large indexing to do (sessionindex.SetBackfill)
// starts "mecha sessions reindex --background" and reads the transcripts
// meanwhile, as git starts its automatic gc in the background, rather than
// making the person wait a minute a gigabyte; Run is that process.
package backfill

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionindex"
)

// lockPath is the lock the background process holds while it runs, as
// session.Acquire takes a session's (.index/backfill.lock, its pid
// inside): one at a time, and none left holding it when killed.
func lockPath(dir string) string {
	return filepath.Join(dir, filepath.Dir(sessionindex.Name), "backfill")
}

// Log is where that process writes what it says, under .index.
const Log = "backfill.log"

// Running reports whether the background indexing of the store in dir
// runs, and its pid (0 when it could not be read).
func Running(dir string) (pid int, running bool, err error) {
	l, err := session.Acquire(lockPath(dir))
	var busy *session.BusyError
	if errors.As(err, &busy) {
		return busy.PID, true, nil
	}
	if err != nil {
		return 0, false, err
	}
	return 0, false, l.Release()
}

// Starter is sessionindex.Index.SetBackfill's start for the store in dir
// (absolute): it starts "mecha sessions reindex --background" (mecha being
// exe, with the environment env gives and MECHA_SESSION_DIR set to dir) in a
// session of its own, says so in one line on stderr, and returns
// true, for the command to read the transcripts this time; while that
// process runs, or within RetryAfter of one that failed (now is the
// clock), it starts no other one and says so. It returns false (the
// command indexes in place) when it cannot start one.
func Starter(dir string, exe func() (string, error), env func() []string, now func() time.Time, stderr io.Writer) func(files int, bytes int64) bool {
	// A command reads the store more than once (a search whose index is
	// handed off lists the store to scan it): the first answer holds, and
	// is said once.
	var mu sync.Mutex
	handed := false
	return func(files int, bytes int64) bool {
		mu.Lock()
		defer mu.Unlock()
		if handed {
			return true
		}
		handed = start(dir, exe, env, now, stderr, files, bytes)
		return handed
	}
}

func start(dir string, exe func() (string, error), env func() []string, now func() time.Time, stderr io.Writer, files int, bytes int64) bool {
	idx := filepath.Join(dir, filepath.Dir(sessionindex.Name))
	if err := os.MkdirAll(idx, 0o700); err != nil {
		return false // the reader indexes, or says why it cannot
	}
	pid, running, err := Running(dir)
	if err != nil {
		return false
	}
	if running {
		fmt.Fprintf(stderr, "mecha: the session index is being built in the background (process %d); reading the transcripts meanwhile\n", pid)
		return true
	}
	last, failed, at := unfinished(filepath.Join(idx, Log))
	if failed && now().Sub(at) < RetryAfter {
		// As git's automatic gc after a failure: not again at every
		// command until the cause is mended, and said each time.
		fmt.Fprintf(stderr, "mecha: the session index is not being built: the background indexing at %s failed (%s); reading the transcripts (another is tried after %s; mecha sessions reindex builds it now)\n",
			at.Format("15:04"), last, at.Add(RetryAfter).Format("15:04"))
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
	cmd.Env = append(env(), "MECHA_SESSION_DIR="+dir)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own session: no terminal, so neither the shell's hangup nor
	// the person's Ctrl-C in this one reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return false
	}
	pid = cmd.Process.Pid
	// Reaped when it ends, should this process still run then (a chat),
	// rather than left a zombie; a command that ends first leaves it to
	// init.
	go cmd.Wait()
	if last != "" {
		last = "; the last one did not finish: " + last
	}
	fmt.Fprintf(stderr, "mecha: indexing %d sessions (%.1f MB) in the background (process %d), this once; until it ends, commands read the transcripts%s\n",
		files, float64(bytes)/(1<<20), pid, last)
	return true
}

// RetryAfter is how long after a background indexing failed (ended on
// its error, Failed) no other is started; one that was stopped part way
// (killed, the machine down) is started again at once.
const RetryAfter = time.Hour

// unfinished says why the background indexing whose log is at path did
// not end with "indexed ..." (its error or last line, or that it was
// stopped part way, killed or the machine down): "" when there is no log
// or it finished. failed says it ended on its error (Failed); at is when
// the log was last written.
func unfinished(path string) (why string, failed bool, at time.Time) {
	f, err := os.Open(path)
	if err != nil {
		return "", false, time.Time{}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", false, time.Time{}
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return "", false, time.Time{}
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	last := strings.TrimPrefix(lines[len(lines)-1], "mecha: ")
	switch {
	case strings.HasPrefix(last, "indexed "):
		return "", false, time.Time{}
	case strings.HasPrefix(last, "indexing "): // its first line, and nothing after
		return "it was stopped part way", false, st.ModTime()
	case strings.HasPrefix(last, failedPrefix):
		return textfmt.OneLine(strings.TrimPrefix(last, failedPrefix)), true, st.ModTime()
	}
	return textfmt.OneLine(last), false, st.ModTime()
}

// failedPrefix starts the error a background indexing ends on (Failed).
const failedPrefix = "background indexing failed: "

// Failed is the error the background indexing ends on when err stopped it:
// its log's last line then tells a failure (which delays the next one,
// RetryAfter) from a process killed after a warning.
func Failed(err error) error { return fmt.Errorf("%s%w", failedPrefix, err) }

// Forget removes the background indexing's log of the store in dir, once
// the index was built another way (sessions reindex): a failure it tells
// of is mended, and delays no background indexing.
func Forget(dir string) error {
	err := os.Remove(filepath.Join(dir, filepath.Dir(sessionindex.Name), Log))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}

// Run is the background indexing of the store in dir: one process at a
// time holds the lock (one started meanwhile returns at once, ran false),
// at a low priority, and brings the index in step (CatchUp), keeping what
// an interrupted one indexed: the number of sessions it lists. The index
// is the store's as sessionindex.For shares it: where its warnings go and
// what interrupts it are what the command set (cmdkit.Env.Store).
func Run(dir string) (n int, ran bool, err error) {
	if err := os.MkdirAll(filepath.Dir(lockPath(dir)), 0o700); err != nil {
		return 0, false, err
	}
	l, err := session.Acquire(lockPath(dir))
	var busy *session.BusyError
	if errors.As(err, &busy) {
		return 0, false, nil // another one runs
	}
	if err != nil {
		return 0, false, err
	}
	defer l.Release()
	syscall.Setpriority(syscall.PRIO_PROCESS, 0, 10)
	n, err = sessionindex.For(dir, nil).CatchUp()
	return n, true, err
}
