package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/mecha-agent/mecha/internal/config"
	"github.com/mecha-agent/mecha/session"
)

// Exit codes, documented in the root command's help.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitBudget      = 3
	ExitInterrupted = 130
)

// Env is what commands get from the world: streams, environment and clock.
// Tests build one with fixed values; Main builds the real one.
type Env struct {
	In       io.Reader
	Out, Err io.Writer
	Getenv   func(string) string
	Now      func() time.Time
	// OutTTY is true when Out is a terminal (colour, progress lines).
	OutTTY bool
	// InTTY is true when In is a terminal a person can answer prompts on.
	InTTY bool
}

// Main runs mecha with the process's arguments and streams and returns the
// exit code.
func Main(args []string) int {
	env := &Env{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Getenv: os.Getenv, Now: time.Now,
		OutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		InTTY:  term.IsTerminal(int(os.Stdin.Fd())),
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first interrupt stops the run gracefully; a second one, with
		// the default handler restored, ends the process at once.
		<-ctx.Done()
		stop()
	}()
	return Run(ctx, env, args)
}

// Run executes one command line and maps its error to an exit code: the
// only place where that happens.
func Run(ctx context.Context, env *Env, args []string) int {
	root := NewCmdRoot(env)
	root.SetArgs(args)
	root.SetIn(env.In)
	root.SetOut(env.Out)
	root.SetErr(env.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ex *exitError
	if errors.As(err, &ex) {
		if ex.msg != "" {
			fmt.Fprintln(env.Err, "mecha: "+oneLine(ex.msg))
		}
		return ex.code
	}
	fmt.Fprintln(env.Err, "mecha: "+oneLine(err.Error()))
	return exitCode(err)
}

func exitCode(err error) int {
	var ue *usageError
	switch {
	case errors.As(err, &ue), errors.Is(err, session.ErrInvalidID):
		return ExitUsage
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailure
}

// usageError marks a mistake in how mecha was called.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return &usageError{fmt.Errorf(format, a...)} }

// exitError ends a command with a given code after it has printed what it
// had to say (msg may be empty).
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// oneLine folds an error onto one line: errors are read in logs and CI.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// Version is mecha's version: the module version when built from a tagged
// module, else "dev".
func Version() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "dev"
}

func (e *Env) getenv(k string) string {
	if e.Getenv == nil {
		return os.Getenv(k)
	}
	return e.Getenv(k)
}

func (e *Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// SessionDir returns the session store's directory.
func (e *Env) SessionDir() (string, error) { return session.DefaultDir(e.getenv) }

// Config loads $MECHA_HOME/config.toml.
func (e *Env) Config() (*config.Config, error) {
	home, err := config.Home(e.getenv)
	if err != nil {
		return nil, err
	}
	return config.Load(home + "/config.toml")
}

// color reports whether output to Out may use colour.
func (e *Env) color() bool {
	return e.OutTTY && e.getenv("NO_COLOR") == "" && e.getenv("TERM") != "dumb"
}
