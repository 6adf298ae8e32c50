// Package tool is "mecha tool": list the tools a run would offer, and call
// one of them once, with no model, exactly as the agent loop would.
package toolcmd

import (
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
)

// NewCmdTool builds "mecha tool" and its subcommands.
func NewCmdTool(env *cmdkit.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tool",
		Short: "List the tools a run offers, or call one with no model",
		Long: `Use mecha's tools directly. A call goes through the same surface a run
builds: confined to the workspace, behind the permission gate, its output
truncated and cleared of secret values, shell commands run in a scrubbed
environment. Scripts written by "mecha script" are made of these calls.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(env, nil), NewCmdCall(env, nil))
	return cmd
}
