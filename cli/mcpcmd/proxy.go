package mcpcmd

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/buildinfo"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/mcp/mcpproxy"
	"github.com/mecha-agent/mecha/mcp/mcpserve"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ProxyOptions are the options of "mecha mcp proxy".
type ProxyOptions struct {
	Env  *cmdkit.Env
	Name string
	HTTP Listen
	URL  string
	// Command and Args start the upstream (everything after --).
	Command string
	Args    []string
}

// NewCmdProxy builds "mecha mcp proxy".
func NewCmdProxy(env *cmdkit.Env, runF func(context.Context, *ProxyOptions) error) *cobra.Command {
	opts := &ProxyOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "proxy [--name NAME] [--http ADDR [--allow-remote] [--token-file FILE]] (--url URL | -- COMMAND [ARGS...])",
		Short: "Put a recording proxy in front of any MCP server",
		Long: `Forward everything, both ways, between an MCP client and one upstream MCP
server (a command started with its arguments, or --url for streamable
HTTP), and record every tools/call in a session of its own: the call when
it arrives, its result when it returns (a call in flight when the proxy
is killed stays on the record, with no result).
The upstream's command or URL, serverInfo and negotiated protocol version
go in the session's config; the client's name in its header.

The proxy is transparent: tools, resources, prompts, completions, logging,
notifications, progress and cancellation pass through, as do the server's
own requests for sampling, elicitation and roots, and the client sees the
upstream's own initialize answer. What passes is not re-encoded: each
message's fields, those mecha does not know and _meta included, reach
the other side as sent (with --http or --url, the upstream's own
notifications and requests pass as the MCP SDK encodes them). It listens on stdio,
or on streamable HTTP with --http (below). The upstream's stderr goes to
the proxy's.

In a client's MCP config, put "mecha mcp proxy --name NAME --" before the
server's command. To record Claude Code's calls to a server:

  claude mcp add everything -- mecha mcp proxy --name everything -- \
      npx -y @modelcontextprotocol/server-everything

or in the project's .mcp.json:

  {"mcpServers": {"everything": {"command": "mecha", "args": ["mcp", "proxy",
    "--name", "everything", "--", "npx", "-y",
    "@modelcontextprotocol/server-everything"]}}}

Each Claude Code session that starts the server starts one proxy, which
records one mecha session: "mecha sessions show last" lists every call
Claude made to the server and what it got back. Environment variables the
config gives the server reach it through the proxy; none is recorded.
"mecha script" and "mecha rerun" redo such a session's calls with no
client at all, as mcp__NAME__TOOL (NAME is --name, else upstream).

` + listenHelp,
		RunE: func(cmd *cobra.Command, args []string) error {
			dash := cmd.ArgsLenAtDash()
			switch {
			case opts.URL != "" && len(args) > 0:
				return cmdkit.Usagef("give either --url or a command after --, not both")
			case opts.URL == "" && len(args) == 0:
				return cmdkit.Usagef("no upstream: give --url URL or -- COMMAND [ARGS...]")
			case opts.URL == "" && dash != 0:
				return cmdkit.Usagef("put the upstream's command after --: mecha mcp proxy -- %s", strings.Join(args, " "))
			}
			if err := opts.HTTP.Validate(); err != nil {
				return err
			}
			if len(args) > 0 {
				opts.Command, opts.Args = args[0], args[1:]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return proxyRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Name, "name", "", "what to call the upstream server in the session")
	opts.HTTP.flags(cmd)
	f.StringVar(&opts.URL, "url", "", "the upstream's streamable HTTP `URL`")
	return cmd
}

func proxyRun(ctx context.Context, opts *ProxyOptions) error {
	env := opts.Env
	up := transcript.MCPUpstream{Name: opts.Name, Transport: "stdio", Command: opts.Command, Args: opts.Args}
	connect := func(context.Context) (mcp.Transport, error) {
		c := exec.Command(opts.Command, opts.Args...)
		c.Env = env.Environ.List()
		c.Stderr = env.Err
		return &mcp.CommandTransport{Command: c}, nil
	}
	var p *mcpproxy.Proxy
	if opts.URL != "" {
		up = transcript.MCPUpstream{Name: opts.Name, Transport: "http", URL: opts.URL}
		connect = func(context.Context) (mcp.Transport, error) {
			return &mcp.StreamableClientTransport{Endpoint: opts.URL, HTTPClient: p.HTTPClient(env.HTTPClient)}, nil
		}
	}
	store, err := env.Store()
	if err != nil {
		return err
	}
	title := "mcp proxy"
	if opts.Name != "" {
		title += ": " + opts.Name
	}
	ws, _ := workdir.Dir("")
	rec := &mcpserve.Recorder{
		Store: store,
		Meta:  transcript.Meta{Provider: "mcp", Workspace: ws, Title: title},
		Warn:  env.Err, Now: env.Clock.Now,
	}
	defer finish(env, rec)
	ids := &mcpserve.IDs{}
	p = mcpproxy.New(mcpproxy.Options{
		Connect:  connect,
		Upstream: up,
		Config: transcript.Config{MechaVersion: buildinfo.Version(), Provider: "mcp", Workspace: ws, Tools: []string{},
			PermissionMode: "yes", Trifecta: "off", Sandbox: "none", SandboxNetwork: true},
		Recorder: rec, IDs: ids, Now: env.Clock.Now, Background: ctx,
		OnError: func(err error) { fmt.Fprintln(env.Err, "mecha: "+err.Error()) },
	})
	defer p.Close()
	if opts.HTTP.Addr != "" {
		watch := func(h http.Handler) http.Handler { return p.WatchHTTP(ids.WatchHTTP(h)) }
		return opts.HTTP.serve(ctx, env, watch, p.Server)
	}
	return stdioDone(ctx, p.Server().Run(ctx, ids.WatchTransport(p.Transport(stdioTransport(env)))))
}
