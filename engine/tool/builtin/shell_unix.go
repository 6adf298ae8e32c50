//go:build unix

package builtin

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// runCommand runs spec.shell -c spec.command in a process group of its own,
// writing its combined output to out, and kills the whole group when the
// timeout passes, when ctx is done, and after the shell exits (so that
// nothing it left in the background outlives the call or keeps the output
// pipe open). Output still arriving from processes that left the group is
// read for at most spec.grace after that. With spec.guard, the group also
// dies with mecha, however mecha ends (see startOrphanGuard).
func runCommand(ctx context.Context, spec commandSpec, out io.Writer) outcome {
	pr, pw, err := os.Pipe()
	if err != nil {
		return outcome{startErr: err}
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	if spec.guard {
		g, err := startOrphanGuard(spec.shell)
		if err != nil {
			pr.Close()
			pw.Close()
			return outcome{startErr: err}
		}
		defer g.release()
		attr.Pgid = g.pid() // the command joins the watcher's group
		setParentDeathSignal(attr)
	}
	if spec.pidns {
		setParentDeathSignal(attr)
	}
	if spec.apply != nil {
		spec.apply(attr)
	}
	cmd := exec.Command(spec.path, spec.argv[1:]...)
	cmd.Args = spec.argv
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.SysProcAttr = attr

	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		if spec.guard || spec.pidns {
			// The parent-death signal fires when the thread that forked
			// the child ends, not when mecha does. A thread this goroutine
			// left could later be taken over by a goroutine that locks it
			// and exits, which ends the thread: so this goroutine keeps the
			// forking thread to itself until the child has been reaped.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		pr.Close()
		pw.Close()
		return outcome{startErr: err}
	}
	pw.Close() // the children hold the only write ends now
	pgid := attr.Pgid
	if pgid == 0 {
		pgid = cmd.Process.Pid
	}

	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, pr)
		close(copied)
	}()
	timer := time.NewTimer(spec.timeout)
	defer timer.Stop()
	var oc outcome
	var werr error
	select {
	case werr = <-waited:
	case <-timer.C:
		oc.timedOut = true
		killGroup(pgid)
		werr = <-waited
	case <-ctx.Done():
		oc.cancelled = true
		killGroup(pgid)
		werr = <-waited
	}
	killGroup(pgid)

	grace := time.NewTimer(spec.grace)
	defer grace.Stop()
	select {
	case <-copied:
	case <-grace.C:
		pr.Close() // unblocks the copy
		<-copied
	}
	pr.Close()

	if oc.timedOut || oc.cancelled {
		return oc
	}
	var ee *exec.ExitError
	switch {
	case werr == nil:
	case errors.As(werr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			oc.signal = ws.Signal().String()
		} else {
			oc.exitCode = ee.ExitCode()
		}
	default:
		oc.waitErr = werr
	}
	return oc
}

// killGroup sends SIGKILL to every process in the group. A group that is
// already gone (ESRCH) is not an error.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// orphanGuard is a watcher process that kills a command's process group
// when mecha dies. mecha is SIGKILLed, crashes or exits without running
// any cleanup of its own, so the only thing that reliably notices is the
// kernel closing its file descriptors: the watcher is the group's leader,
// blocked reading a pipe whose only write end mecha holds. When that end
// closes, for whatever reason, the read returns and the watcher kills its
// whole group, grandchildren included, itself last.
//
// The parent-death signal (setParentDeathSignal) alone would not do: it
// reaches only the shell mecha started, not what the shell started, and
// it fires when the forking thread ends rather than the process. A
// subreaper would not do either: orphans go to it only while it lives.
// Processes that leave the group (setsid) escape both, as they escape the
// timeout's group kill.
type orphanGuard struct {
	cmd *exec.Cmd
	w   *os.File // the only write end of the watcher's standard input
}

// watcherScript waits for end of file on standard input, then kills the
// process group. Both are shell builtins: the watcher needs no PATH.
const watcherScript = "read x; kill -KILL 0"

// startOrphanGuard starts the watcher in a new process group, with an empty
// environment (its /proc/PID/environ holds no secret for the command to
// read) and its output discarded.
func startOrphanGuard(shell string) (*orphanGuard, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(shell, "-c", watcherScript)
	cmd.Dir = "/"
	cmd.Env = []string{}
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	r.Close() // the watcher has its copy; mecha keeps only w
	if err != nil {
		w.Close()
		return nil, err
	}
	return &orphanGuard{cmd: cmd, w: w}, nil
}

// pid is the watcher's pid, the id of the command's process group.
func (g *orphanGuard) pid() int { return g.cmd.Process.Pid }

// release ends the watcher once the call is over: closing the pipe makes
// it kill whatever is left of its group (runCommand has killed the group
// already, so usually only itself), and it is reaped.
func (g *orphanGuard) release() {
	g.w.Close()
	_ = g.cmd.Wait()
}
