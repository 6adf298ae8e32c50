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
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// NewCmdMCP builds "mecha mcp".
func NewCmdMCP(env *cmdkit.Env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "MCP: list and call configured servers, serve mecha's tools, record calls to any server",
		Long: `MCP servers come from [mcp.servers.NAME] tables in $MECHA_HOME/config.toml and
from .mcp.json files given with --mcp-config (the format Claude Code and
Cursor share; run, chat, replay, regress, tool, doctor and mcp take it); their
tools are offered to the model as mcp__SERVER__TOOL, sanitised to
[A-Za-z0-9_-] and cut to 64 bytes (two tools that end up with one name are
an error naming both). A .mcp.json in the workspace is never loaded on its
own, since it can start any program. --no-mcp starts no server.

  [mcp.servers.everything]
  command = "npx"                       a program on stdio, or:
  args = ["-y", "@modelcontextprotocol/server-everything"]
  env = { GITHUB_TOKEN = "${GITHUB_TOKEN}" }   added to its environment
  # url = "https://host/mcp"            streamable HTTP (transport = "sse"
  # headers = { Authorization = "Bearer ${TOKEN}" }    for the older one)
  # enabled = false                     listed, never started
  # tools = ["echo", "get-sum"]         offer only these
  # capabilities = ["reads_workspace"]  narrow what its tools declare
  # trust_annotations = true            believe readOnlyHint / openWorldHint
  # startup_timeout_s = 30              connect, initialize and tools/list
  # tool_timeout_s = 600                one call

  [mcp.servers.mail.tool_capabilities]  what single tools declare, by the
  read_inbox = ["reads_workspace", "external"]    server's names for them;
  send_email = ["reaches_network", "acts_outward"]   an entry wins over
  list_folders = []                     capabilities for its tool

${VAR} is expanded when the server starts (an unset one stops that server)
and is never recorded, nor are env or header values. A stdio server gets
mecha's environment less the variables holding credentials, as the
shell does: pass one through env when the server needs it.

Capabilities: an MCP tool declares every capability (reads_workspace,
modifies_workspace, runs_commands, reaches_network, acts_outward,
external) unless capabilities narrows them, so each call asks first and
taints the session as the shell does. reaches_network says data can leave
with a call; acts_outward that a call does something in the world in the
user's name (pays, books, posts, messages, invites) whose harm needs no
private data. The interlock refuses a reaches_network call once the
conversation holds private data and untrusted content, and an
acts_outward call once it holds untrusted content. A server that reads
files and reaches the network is all three legs of the trifecta in one
call: narrow it (see SECURITY.md). Servers mix tools: tool_capabilities
says what each one declares, so that once a conversation holds untrusted
text the interlock refuses the mail server's send_email and still lets
read_inbox and list_folders run. It is a table of its own, not [mcp.servers.NAME.tools.TOOL], because
TOML cannot hold tools both as the list above and as a table. In a
.mcp.json the same keys go in a server's "mecha" object, which other
clients ignore:

  {"mcpServers": {"mail": {"command": "mail-mcp", "mecha": {
    "capabilities": [], "tool_capabilities": {"send_email": ["reaches_network", "acts_outward"]}}}}}

"mecha mcp list" shows what each tool declares; a run's config record
keeps it for each tool offered, and "mecha rerun" judges the calls it
redoes by what was recorded, not by today's configuration.

Servers start in parallel; one that fails costs a line on stderr and the
run goes on without it. A stdio server's stderr goes to
$MECHA_HOME/logs/mcp-SERVER.log. Ctrl-C cancels a call (the server is
told); a server that died gives error results. At the end each server's
stdin is closed, then its process group gets SIGTERM, then SIGKILL. A
run's config record names each server, how it was reached, its serverInfo,
protocol version and tools; a replay refuses a session whose MCP tool is
not offered today, naming it, and notes a server whose version changed.

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
	return harness.MCPServers(cfg, t.Files)
}

func describeServer(s *mcpclient.Server) string {
	c := s.Config()
	if c.Kind() == mcpclient.TransportStdio {
		return strings.Join(append([]string{c.Command}, c.Args...), " ")
	}
	return fmt.Sprintf("%s %s", c.Kind(), c.URL)
}
