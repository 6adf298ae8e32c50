//go:build unix

package builtin

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// runCommand runs spec.shell -c spec.command in a process group of its own,
// writing its combined output to out, and kills the whole group when the
// timeout passes, when ctx is done, and after the shell exits (so that
// nothing it left in the background outlives the call or keeps the output
// pipe open). Output still arriving from processes that left the group is
// read for at most spec.grace after that.
func runCommand(ctx context.Context, spec commandSpec, out io.Writer) outcome {
	pr, pw, err := os.Pipe()
	if err != nil {
		return outcome{startErr: err}
	}
	cmd := exec.Command(spec.shell, "-c", spec.command)
	cmd.Dir = spec.dir
	cmd.Env = spec.env
	cmd.Stdin = nil // /dev/null
	cmd.Stdout = pw
	cmd.Stderr = pw
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return outcome{startErr: err}
	}
	pw.Close() // the children hold the only write ends now
	pgid := cmd.Process.Pid

	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, pr)
		close(copied)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

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
