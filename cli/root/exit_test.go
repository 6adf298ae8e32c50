package root

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionindex"
)

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("disk on fire"), ExitFailure},
		{cmdkit.Usagef("bad flag"), ExitUsage},
		{fmt.Errorf("wrapped: %w", cmdkit.Usagef("bad flag")), ExitUsage},
		{fmt.Errorf("sessions: %w", session.ErrInvalidID), ExitUsage},
		{&cmdkit.BudgetError{Budget: "max_turns"}, ExitBudget},
		{&cmdkit.DivergedError{Msg: "1 of 1 replay diverged"}, ExitFailure},
		{&cmdkit.ToolError{Tool: "fs_read", Msg: "no such file"}, ExitFailure},
		{&cmdkit.InterruptedError{Msg: "interrupted"}, ExitInterrupted},
		{fmt.Errorf("agent: %w", context.Canceled), ExitInterrupted},
		{fmt.Errorf("listing: %w", sessionindex.ErrInterrupted), ExitInterrupted},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}
