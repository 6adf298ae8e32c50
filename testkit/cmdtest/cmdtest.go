// Package cmdtest helps the unit tests of mecha's commands: it runs a
// command built with a runF hook on arguments, with its output discarded
// and its errors returned rather than printed, as the root command runs it.
package cmdtest

import (
	"context"
	"io"

	"github.com/spf13/cobra"
)

// Execute runs cmd on args and returns its error.
func Execute(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.ExecuteContext(context.Background())
}
