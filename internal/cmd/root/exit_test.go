package root

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/session"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("disk on fire"), ExitFailure},
		{cmdutil.Usagef("bad flag"), ExitUsage},
		{fmt.Errorf("wrapped: %w", cmdutil.Usagef("bad flag")), ExitUsage},
		{fmt.Errorf("sessions: %w", session.ErrInvalidID), ExitUsage},
		{&cmdutil.BudgetError{Budget: "max_turns"}, ExitBudget},
		{&cmdutil.DivergedError{Msg: "1 of 1 replay diverged"}, ExitFailure},
		{&cmdutil.ToolError{Tool: "fs_read", Msg: "no such file"}, ExitFailure},
		{&cmdutil.InterruptedError{Msg: "interrupted"}, ExitInterrupted},
		{fmt.Errorf("agent: %w", context.Canceled), ExitInterrupted},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
