// Package mcp holds "mecha mcp": the MCP servers mecha is configured
// with (list, call), mecha's tools as an MCP server (serve), and a
// recording proxy in front of any MCP server (proxy). serve and proxy
// record every tools/call as a tool_call record.
package mcpcmd

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// NewCmdMCP builds "mecha mcp".
func NewCmdMCP(env *cmdkit.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP: list and call configured servers, serve mecha's tools, record calls to any server",
		Long: `MCP servers come from [mcp.servers.NAME] tables in $MECHA_HOME/config.toml and
from .mcp.json files given with --mcp-config; their tools are offered to the
model as mcp__SERVER__TOOL. A .mcp.json in the workspace is never loaded on
its own.

"mecha mcp serve" offers mecha's built-in tools to any MCP client; "mecha mcp
proxy" sits in front of any MCP server. Both record every tools/call, as it
runs, in a session of their own.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(NewCmdList(env, nil), NewCmdCall(env, nil), NewCmdServe(env, nil), NewCmdProxy(env, nil))
	return cmd
}

// target is which servers a subcommand works on: the configured ones, or
// one given on the command line.
type target struct {
	Files   []string
	URL     string
	Command string
}

func (t *target) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringArrayVar(&t.Files, "mcp-config", nil, "also use the MCP servers of this .mcp.json `FILE` (repeatable)")
	f.StringVar(&t.URL, "url", "", "an MCP server at this streamable HTTP `URL`, not a configured one")
	f.StringVar(&t.Command, "command", "", "an MCP server started as `'CMD ARGS'` (split on spaces), not a configured one")
}

func (t *target) adHoc() bool { return t.URL != "" || t.Command != "" }

// servers returns the servers to work on. An ad-hoc server is named name.
func (t *target) servers(env *cmdkit.Env, name string) ([]mcpclient.ServerConfig, error) {
	if t.URL != "" && t.Command != "" {
		return nil, cmdkit.Usagef("--url and --command name two servers; give one")
	}
	if t.adHoc() {
		if len(t.Files) > 0 {
			return nil, cmdkit.Usagef("--mcp-config does not go with --url or --command")
		}
		c := mcpclient.ServerConfig{Name: name, URL: t.URL, Source: "the command line"}
		if t.Command != "" {
			f := strings.Fields(t.Command)
			if len(f) == 0 {
				return nil, cmdkit.Usagef("--command is empty")
			}
			c.Command, c.Args = f[0], f[1:]
		}
		if err := c.Validate(); err != nil {
			return nil, &cmdkit.UsageError{Err: err}
		}
		return []mcpclient.ServerConfig{c}, nil
	}
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	return cmdkit.MCPServers(cfg, t.Files)
}

func describeServer(s *mcpclient.Server) string {
	c := s.Config()
	if c.Kind() == mcpclient.TransportStdio {
		return strings.Join(append([]string{c.Command}, c.Args...), " ")
	}
	return fmt.Sprintf("%s %s", c.Kind(), c.URL)
}
