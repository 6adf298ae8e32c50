package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionindex"
)

// Exit codes, documented in the root command's help. Only ExitCode picks
// one.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitBudget      = 3
	ExitInterrupted = 130
)

// Main runs mecha with the process's arguments and streams and returns the
// exit code.
func Main(args []string) int {
	// The shell tool re-executes mecha as its sandbox helper, which
	// confines itself and execs the command: nothing else of mecha runs.
	if sandbox.IsHelper(args) {
		return sandbox.Helper(args)
	}
	// Before anything else: no command mecha runs may read its memory or
	// environment. Failing to hide is not fatal (redaction still holds).
	_ = hideProcess()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		// The first interrupt stops the run gracefully; a second one, with
		// the default handler restored, ends the process at once.
		<-ctx.Done()
		stop()
	}()
	return Run(ctx, cmdkit.System(), args)
}

// Run executes one command line, prints its error on one line and returns
// the exit code.
func Run(ctx context.Context, env *cmdkit.Env, args []string) int {
	if env.Interrupted == nil {
		env.Interrupted = ctx.Done()
	}
	root := newCmdRoot(env, completing(args))
	root.SetArgs(args)
	root.SetIn(env.In)
	root.SetOut(env.Out)
	root.SetErr(env.Err)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	// An error may quote what a tool said or a session recorded.
	if msg := textfmt.OneLine(env.ForErr(err.Error())); msg != "" {
		fmt.Fprintln(env.Err, "mecha: "+msg)
	}
	return ExitCode(err)
}

// ExitCode maps an error to mecha's exit status: the one place where that
// happens.
func ExitCode(err error) int {
	var (
		usage       *cmdkit.UsageError
		setting     *harness.UsageError
		budget      *cmdkit.BudgetError
		diverged    *cmdkit.DivergedError
		toolErr     *cmdkit.ToolError
		interrupted *cmdkit.InterruptedError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &usage), errors.As(err, &setting), errors.Is(err, session.ErrInvalidID):
		return ExitUsage
	case errors.As(err, &budget):
		return ExitBudget
	case errors.As(err, &diverged), errors.As(err, &toolErr):
		return ExitFailure
	case errors.As(err, &interrupted), errors.Is(err, context.Canceled), errors.Is(err, sessionindex.ErrInterrupted):
		return ExitInterrupted
	}
	return ExitFailure
}
