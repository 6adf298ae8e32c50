package cmdkit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// DefaultPager is the pager when $PAGER is unset or empty.
const DefaultPager = "less -R"

// ErrPagerQuit is what writing to a pager returns once the person has
// quit it: the command stops writing and succeeds.
var ErrPagerQuit = errors.New("the pager was quit")

// Pager is output sent through $PAGER, or straight to Out.
type Pager struct {
	// Out is where to write.
	Out io.Writer
	cmd *exec.Cmd
	in  io.WriteCloser
}

// StartPager starts the pager when Out is a terminal: $PAGER (a command
// and its arguments, split at white space; default "less -R"), found on
// the Env's $PATH, its input a pipe from us and its output the terminal.
// less is given LESS=FRX unless $LESS is set, so output shorter than a
// screen is printed and left on the screen, as git does. When Out is not
// a terminal, or the pager cannot be started (with a note on Err), the
// Pager writes to Out directly. Close waits for the pager.
func (e *Env) StartPager() *Pager {
	if !e.OutTTY {
		return &Pager{Out: e.Out}
	}
	line := strings.TrimSpace(e.Vars.Get("PAGER"))
	if line == "" {
		line = DefaultPager
	}
	words := strings.Fields(line)
	path, err := e.lookPath(words[0])
	if err != nil {
		fmt.Fprintf(e.Err, "note: the pager %q did not start (%v); writing directly\n", line, err)
		return &Pager{Out: e.Out}
	}
	cmd := exec.Command(path, words[1:]...)
	cmd.Env = e.Environ.List()
	if e.Vars.Get("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	cmd.Stdout, cmd.Stderr = e.Out, e.Err
	in, err := cmd.StdinPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Fprintf(e.Err, "note: the pager %q did not start (%v); writing directly\n", line, err)
		return &Pager{Out: e.Out}
	}
	return &Pager{Out: quitWriter{in}, cmd: cmd, in: in}
}

// Close ends the pager's input and waits for the person to quit it, and
// returns werr, the error of writing to it, unless that only says the
// pager was quit before the end; a pager that fails (a status other than
// 0) is an error.
func (p *Pager) Close(werr error) error {
	if p.cmd == nil {
		return werr
	}
	p.in.Close()
	err := p.cmd.Wait()
	if werr != nil && !errors.Is(werr, ErrPagerQuit) {
		return werr
	}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return fmt.Errorf("the pager %s exited with status %d", filepath.Base(p.cmd.Path), ee.ExitCode())
	case err != nil:
		return fmt.Errorf("the pager: %w", err)
	}
	return nil
}

// quitWriter turns the broken pipe of a pager that was quit into
// ErrPagerQuit.
type quitWriter struct{ w io.Writer }

func (q quitWriter) Write(p []byte) (int, error) {
	n, err := q.w.Write(p)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed) {
		return n, ErrPagerQuit
	}
	return n, err
}

// lookPath finds a program as exec.LookPath does, but on the Env's $PATH.
func (e *Env) lookPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(e.Vars.Get("PATH")) {
		if dir == "" {
			dir = "."
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found in $PATH", name)
}
