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
	set := mcpclient.Start(ctx, []mcpclient.ServerConfig{*conf}, harness.MCPOptions(attach.World(opts.Env), ""))
	defer set.Close()
	s := set.Servers()[0]
	if s.Err != nil {
		return fmt.Errorf("mcp: server %q did not start: %w", opts.Server, s.Err)
	}
	var t *mcpclient.Tool
	var names []string
	for _, c := range s.Tools() {
		names = append(names, c.Remote())
		if c.Remote() == opts.Tool || c.Spec().Name == opts.Tool {
			t = c
		}
	}
	if t == nil {
		return fmt.Errorf("mcp: server %q has no tool %q (it has: %s)", opts.Server, opts.Tool, strings.Join(names, ", "))
	}
	res, err := t.Run(ctx, input)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return &cmdkit.InterruptedError{Msg: "interrupted; the call was cancelled"}
		}
		return err
	}
	fmt.Fprintln(opts.Env.Out, res.Content)
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
