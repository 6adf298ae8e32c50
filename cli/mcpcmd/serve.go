package mcpcmd

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/buildinfo"
	"github.com/mecha-agent/mecha/mcp/mcpserve"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ServeOptions are the options of "mecha mcp serve".
type ServeOptions struct {
	Env           *cmdkit.Env
	Workspace     string
	Tools         []string
	Yes, ReadOnly bool
	HTTP          Listen
	Sandbox       harness.Sandbox
}

// NewCmdServe builds "mecha mcp serve".
func NewCmdServe(env *cmdkit.Env, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	opts := &ServeOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "serve [-w DIR] [--tool NAME ...] [--read-only | --yes] [--http ADDR [--allow-remote] [--token-file FILE]]",
		Short: "Offer mecha's built-in tools to any MCP client, recording every call",
		Long: `Serve mecha's built-in tools (fs_read, fs_list, fs_write, fs_edit, fs_grep,
fs_glob, shell, web_fetch) to an MCP client over stdio, or over streamable
HTTP with --http. The tools are
confined to the workspace as in a run, and the shell is sandboxed as in a
run (--sandbox, --sandbox-network).

There is no terminal to ask on, so the server is read-only unless --yes:
calls that modify the workspace or run a command are denied with the usual
message. Each server run is a session: its header names the client, its
config the workspace, the tools and the permission mode, and every
tools/call is recorded as it runs. Recording never fails a call; a write
that fails is said once on stderr.

` + listenHelp,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := attach.Usage(opts.surface().Validate()); err != nil {
				return err
			}
			if err := opts.HTTP.Validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return serveRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Workspace, "workspace", "w", "", "the directory the tools work in (default: the current directory)")
	f.StringArrayVar(&opts.Tools, "tool", nil, "offer only this tool (repeatable; default: every built-in tool)")
	attach.PermissionFlags(cmd, &opts.Yes, &opts.ReadOnly)
	opts.HTTP.flags(cmd)
	attach.SandboxFlags(cmd, &opts.Sandbox)
	return cmd
}

// surface is the surface served: a run's built-ins, with no MCP server
// (its client is the model's harness, with servers of its own), read-only
// unless --yes (no terminal to ask on), and the interlock off: the
// client's conversation, which the interlock would judge, is not seen.
func (o *ServeOptions) surface() harness.SurfaceSpec {
	return harness.SurfaceSpec{Workspace: o.Workspace, Yes: o.Yes, ReadOnly: o.ReadOnly || !o.Yes, Trifecta: string(tool.TrifectaOff),
		Sandbox: o.Sandbox, MCP: harness.MCP{Off: true}, Tools: o.Tools}
}

func serveRun(ctx context.Context, opts *ServeOptions) error {
	env := opts.Env
	surf, err := harness.OpenSurface(ctx, attach.World(env), opts.surface())
	if err != nil {
		return err
	}
	defer surf.Close()
	reg, rc := surf.Registry(), surf.Config()
	rc.Provider = "mcp"
	store, err := env.Store()
	if err != nil {
		return err
	}
	rec := &mcpserve.Recorder{
		Store:  store,
		Meta:   transcript.Meta{Provider: rc.Provider, Workspace: rc.Workspace, Title: "mcp serve"},
		Config: &rc, Warn: env.Err, Now: env.Clock.Now,
	}
	defer finish(env, rec)
	ids := &mcpserve.IDs{}
	newServer := func() *mcp.Server {
		s := mcpserve.NewServer(mcpserve.Implementation(buildinfo.Version()), reg, nil)
		s.AddReceivingMiddleware(mcpserve.Middleware(rec, ids, env.Clock.Now))
		return s
	}
	if opts.HTTP.Addr != "" {
		return opts.HTTP.serve(ctx, env, ids.WatchHTTP, newServer)
	}
	return stdioDone(ctx, newServer().Run(ctx, ids.WatchTransport(stdioTransport(env))))
}

// stdioDone is the end of a stdio server: the client closing stdin, or an
// interrupt, is how a server stops, not a failure.
func stdioDone(ctx context.Context, err error) error {
	if err == nil || ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
