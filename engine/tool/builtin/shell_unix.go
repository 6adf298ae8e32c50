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
// dies with mecha, however mecha ends (see startOrphanGuard). With
// spec.lifeline (a confined command) the sandbox's helper ends everything
// the command started, those that left the group included, when the
// command ends, when the lifeline is closed here (timeout, cancel) and
// when mecha dies (see sandbox.Cmd.Lifeline); the group's kill then only
// backs it up.
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
		setParentDeathSignal(attr, syscall.SIGKILL)
	}
	var lifeline *os.File // mecha's end: closing it ends the call
	var extra []*os.File
	if spec.lifeline {
		lr, lw, err := os.Pipe()
		if err != nil {
			pr.Close()
			pw.Close()
			return outcome{startErr: err}
		}
		defer lw.Close()
		lifeline, extra = lw, []*os.File{lr}
		if spec.pidns {
			setParentDeathSignal(attr, syscall.SIGKILL)
		} else {
			setParentDeathSignal(attr, syscall.SIGTERM)
		}
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
	cmd.ExtraFiles = extra

	started := make(chan error, 1)
	waited := make(chan error, 1)
	go func() {
		if spec.guard || spec.lifeline {
			// The parent-death signal fires when the thread that forked
			// the child ends, not when mecha does. A thread this goroutine
			// left could later be taken over by a goroutine that locks it
			// and exits, which ends the thread: so this goroutine keeps the
			// forking thread to itself until the child has been reaped.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
		}
		start := cmd.Start
		if spec.around != nil {
			start = func() error { return spec.around(cmd.Start) }
		}
		if err := start(); err != nil {
			started <- err
			return
		}
		started <- nil
		waited <- cmd.Wait()
	}()
	err = <-started
	for _, f := range extra {
		f.Close() // the helper has its copy
	}
	if err != nil {
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
	ended := false
	select {
	case werr = <-waited:
		ended = true
	case <-timer.C:
		oc.timedOut = true
	case <-ctx.Done():
		oc.cancelled = true
	}
	if lifeline != nil {
		// The helper ends what the command started (it has, if the
		// command ended) and exits; the group's kill below is what is
		// left to do if it does not in time.
		lifeline.Close()
		if !ended {
			select {
			case werr = <-waited:
				ended = true
			case <-time.After(lifelineGrace):
			}
		}
	}
	killGroup(pgid)
	if !ended {
		werr = <-waited
	}

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

// lifelineGrace is how long the sandbox's helper is given to end what a
// timed-out or cancelled command started before its group is killed.
const lifelineGrace = 2 * time.Second

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
// timeout's group kill: so it is the unconfined shell's guard only. A
// confined command's helper is a subreaper that lives until it has ended
// them (sandbox.Cmd.Lifeline).
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
