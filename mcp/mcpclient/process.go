package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// process is a stdio server's process. mecha starts it itself, rather than
// through the SDK's CommandTransport, to own three things: its stderr
// (a log file, not the terminal and not discarded), its process group
// (so that the programs it starts, like npx's node, go with it), and its
// end (stdin closed, then SIGTERM to the group, then SIGKILL).
type process struct {
	cmd   *exec.Cmd
	stdin *os.File // our end of the server's stdin
	done  chan struct{}
	grace time.Duration

	closeOnce sync.Once
	waitErr   error
}

// startProcess starts cmd with its stdin and stdout on pipes and its
// stderr on stderr (nil: discarded), in a process group of its own.
func startProcess(cmd *exec.Cmd, stderr io.Writer, grace time.Duration) (*process, io.ReadCloser, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, stderr
	// A group of its own: the terminal's Ctrl-C reaches mecha, which tells
	// the server by cancelling the call, and the whole group can be ended.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		inR.Close()
		inW.Close()
		outR.Close()
		outW.Close()
		return nil, nil, err
	}
	// The child holds its own copies; ours would keep the pipes open.
	inR.Close()
	outW.Close()
	p := &process{cmd: cmd, stdin: inW, done: make(chan struct{}), grace: grace}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, outR, nil
}

// Close ends the server: stdin closed, a grace period to exit, SIGTERM to
// its group, another grace period, SIGKILL to its group. Programs the
// server left running in its group are killed even when it exited by
// itself. Close returns once the server has exited.
func (p *process) Close() error {
	p.closeOnce.Do(func() {
		p.stdin.Close()
		pgid := p.cmd.Process.Pid
		if !p.wait(p.grace) {
			syscall.Kill(-pgid, syscall.SIGTERM)
			if !p.wait(p.grace) {
				syscall.Kill(-pgid, syscall.SIGKILL)
				<-p.done
			}
		}
		// Whatever the server started and left behind in its group.
		syscall.Kill(-pgid, syscall.SIGKILL)
	})
	return nil
}

func (p *process) wait(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// Exited reports whether the server's process has ended, and how.
func (p *process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// procTransport is an mcp.Transport over a started process's pipes.
type procTransport struct {
	p      *process
	stdout io.ReadCloser
}

func (t *procTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	return (&mcp.IOTransport{Reader: t.stdout, Writer: &stdinWriter{t.p}}).Connect(ctx)
}

// stdinWriter writes to the server's stdin; closing it closes stdin, and
// a write to a server that is gone says so.
type stdinWriter struct{ p *process }

func (w *stdinWriter) Write(b []byte) (int, error) {
	n, err := w.p.stdin.Write(b)
	if err != nil {
		if exited, werr := w.p.Exited(); exited {
			return n, fmt.Errorf("the server exited (%v): %w", exitText(werr), err)
		}
	}
	return n, err
}

func (w *stdinWriter) Close() error { return w.p.stdin.Close() }

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
