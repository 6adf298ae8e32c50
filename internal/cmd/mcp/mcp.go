// Package mcp holds "mecha mcp" and its subcommands: serve (mecha's tools
// as an MCP server) and proxy (a recording proxy in front of any MCP
// server). Both record every tools/call as a tool_call record.
package mcp

import (
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/internal/cmdutil"
)

// NewCmdMCP builds "mecha mcp" and its subcommands.
func NewCmdMCP(env *cmdutil.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Speak MCP: serve mecha's tools, or record calls to any server",
		Long: `mecha in the MCP world. "mecha mcp serve" offers mecha's built-in tools to
any MCP client; "mecha mcp proxy" sits in front of any MCP server. Both
record every tools/call, as it runs, in a session of their own.`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdServe(env, nil), NewCmdProxy(env, nil))
	return cmd
}
