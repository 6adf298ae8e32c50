package cmdkit

import (
	"fmt"
)

// The typed errors below say what kind of failure a command had; the root
// command maps them to exit codes in one place, and no command picks a
// number.

// UsageError marks a mistake in how mecha was called.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// BudgetError means a run stopped because it reached a budget. Msg, when
// set, says so in place of the generic sentence.
type BudgetError struct{ Budget, Msg string }

func (e *BudgetError) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return "stopped: the run reached its " + e.Budget + " budget"
}

// DivergedError means a check found what it was asked to fail on: a
// replay that diverged in error mode, pins that did not replay clean.
type DivergedError struct{ Msg string }

func (e *DivergedError) Error() string { return e.Msg }

// InterruptedError means the person stopped the command; Msg says what
// was kept.
type InterruptedError struct{ Msg string }

func (e *InterruptedError) Error() string { return e.Msg }

// ToolError means a tool called on its own ("mecha tool call") returned an
// error result; the result itself was printed. Msg, when set, is the
// result when it is one short line.
type ToolError struct{ Tool, Msg string }

func (e *ToolError) Error() string {
	if e.Msg == "" {
		return e.Tool + " returned an error result"
	}
	return e.Tool + " returned an error: " + e.Msg
}
