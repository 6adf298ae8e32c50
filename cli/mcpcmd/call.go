package mcpcmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/complete"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// CallOptions are the options of "mecha mcp call".
type CallOptions struct {
	Env          *cmdkit.Env
	Server, Tool string
	Input        string // JSON, or "-" for stdin
	Target       target
}

// NewCmdCall builds "mecha mcp call".
func NewCmdCall(env *cmdkit.Env, runF func(context.Context, *CallOptions) error) *cobra.Command {
	opts := &CallOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "call SERVER TOOL [JSON|-]",
		Short: "Call one tool of an MCP server, with no model",
		Long: `Start one MCP server (a configured one, or the one --url or --command gives,
named SERVER), call TOOL (the server's own name for it, or mcp__SERVER__TOOL)
with the JSON object given (default {}; - reads it from stdin), print the
result as the model would read it, and stop the server.

Exit status: 0 on a result, 1 on an error result or a server that does not
start, 2 on bad usage.`,
		Args: cmdkit.RangeArgs(2, 3, "SERVER TOOL [JSON|-]"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Server, opts.Tool, opts.Input = args[0], args[1], "{}"
			if len(args) == 3 {
				opts.Input = args[2]
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return callRun(cmd.Context(), opts)
		},
	}
	opts.Target.flags(cmd)
	cmd.ValidArgsFunction = complete.FirstArg(complete.CompleteMCPServers(env))
	return cmd
}

func callRun(ctx context.Context, opts *CallOptions) error {
	input, err := readInput(opts.Env, opts.Input)
	if err != nil {
		return err
	}
	servers, err := opts.Target.servers(opts.Env, opts.Server)
	if err != nil {
		return err
	}
	var conf *mcpclient.ServerConfig
	for i := range servers {
		if servers[i].Name == opts.Server {
			conf = &servers[i]
		}
	}
	if conf == nil {
		return cmdkit.Usagef("mcp: no MCP server %q is configured (or give one with --url or --command)", opts.Server)
	}
	if conf.Disabled {
		return fmt.Errorf("mcp: server %q is disabled (enabled = false)", opts.Server)
	}
	// The call goes through the harness's surface and so through the one
	// policy chain: allowed (a person named it), no conversation to arm
	// the interlock, secrets redacted from the result.
	name := opts.Tool
	if !strings.HasPrefix(name, mcpclient.NamePrefix) {
		name = mcpclient.ToolName(conf.Name, opts.Tool)
	}
	sf, err := harness.OpenSurface(ctx, attach.World(opts.Env), harness.SurfaceSpec{Yes: true, Trifecta: string(tool.TrifectaOff),
		Sandbox: harness.Sandbox{Mode: sandbox.ModeNone}, MCP: harness.MCP{Off: true}, Servers: []mcpclient.ServerConfig{*conf},
		For: name, Tools: []string{mcpclient.ServerPrefix(conf.Name)}})
	if err != nil {
		return err
	}
	defer sf.Close()
	if err := sf.MissingServer(name); err != nil {
		return err
	}
	t, ok := sf.Registry().Get(name)
	if !ok {
		var names []string
		for _, n := range sf.Registry().Names() {
			names = append(names, strings.TrimPrefix(n, mcpclient.ServerPrefix(conf.Name)+"__"))
		}
		return fmt.Errorf("mcp: server %q has no tool %q (it has: %s)", opts.Server, opts.Tool, strings.Join(names, ", "))
	}
	res, err := t.Run(ctx, input)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &cmdkit.InterruptedError{Msg: "interrupted; the call was cancelled"}
		}
		return err
	}
	fmt.Fprintln(opts.Env.Out, opts.Env.ForOut(res.Content))
	if res.IsError {
		return fmt.Errorf("mcp: %s of server %q returned an error result", opts.Tool, opts.Server)
	}
	return nil
}

// readInput returns the call's arguments: a JSON object, from the
// argument or from stdin.
func readInput(env *cmdkit.Env, arg string) (json.RawMessage, error) {
	b := []byte(arg)
	if arg == "-" {
		var err error
		if b, err = io.ReadAll(env.In); err != nil {
			return nil, err
		}
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil || obj == nil {
		return nil, cmdkit.Usagef("mcp: the arguments must be a JSON object, like {\"text\":\"hi\"}")
	}
	return json.RawMessage(b), nil
}
