package mcpcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// ListOptions are the options of "mecha mcp list".
type ListOptions struct {
	Env    *cmdkit.Env
	JSON   bool
	Target target
}

// NewCmdList builds "mecha mcp list".
func NewCmdList(env *cmdkit.Env, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Start every configured MCP server and list it with its tools",
		Long: `Start every configured MCP server (in parallel, as a run does), and list each:
whether it connected (or why not), who answered and in which protocol
version, and its tools under the names the model is offered, with the
capabilities they declare ("per tool" when the server's tool_capabilities
names the tool; "none" when it declares none). Disabled servers are listed,
not started.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the servers as JSON")
	opts.Target.flags(cmd)
	return cmd
}

type listedTool struct {
	Name         string   `json:"name"`
	Remote       string   `json:"remote"`
	Capabilities []string `json:"capabilities"`
	// PerTool is true when the capabilities come from the tool's own
	// entry in tool_capabilities rather than the server's.
	PerTool bool `json:"per_tool,omitempty"`
}

type listedServer struct {
	Name            string       `json:"name"`
	Transport       string       `json:"transport"`
	Status          string       `json:"status"` // connected, failed, disabled
	Error           string       `json:"error,omitempty"`
	ServerName      string       `json:"server_name,omitempty"`
	ServerVersion   string       `json:"server_version,omitempty"`
	ProtocolVersion string       `json:"protocol_version,omitempty"`
	Tools           []listedTool `json:"tools"`
}

func listRun(ctx context.Context, opts *ListOptions) error {
	servers, err := opts.Target.servers(opts.Env, "adhoc")
	if err != nil {
		return err
	}
	set := harness.ConnectMCP(ctx, attach.World(opts.Env), servers, "")
	defer set.Close()
	var out []listedServer
	for _, s := range set.Servers() {
		out = append(out, listed(s))
	}
	if opts.JSON {
		if out == nil {
			out = []listedServer{}
		}
		return cmdkit.WriteJSON(opts.Env.Out, out)
	}
	if len(out) == 0 {
		fmt.Fprintln(opts.Env.Out, "no MCP servers configured ([mcp.servers.NAME] in config.toml, or --mcp-config FILE)")
		return nil
	}
	// What a server says of itself (its name, version, tool names, errors)
	// is shown on one line each, made visible: a server may be hostile.
	show := func(s string) string { return textfmt.VisibleLine(s) }
	for i, l := range out {
		fmt.Fprintf(opts.Env.Out, "%s  %s  %s", l.Name, show(describeServer(set.Servers()[i])), l.Status)
		switch l.Status {
		case "connected":
			fmt.Fprintf(opts.Env.Out, "  %s %s (protocol %s)", show(l.ServerName), show(l.ServerVersion), show(l.ProtocolVersion))
		case "failed":
			fmt.Fprintf(opts.Env.Out, ": %s", show(l.Error))
		}
		fmt.Fprintln(opts.Env.Out)
		for _, t := range l.Tools {
			caps := strings.Join(t.Capabilities, ", ")
			if caps == "" {
				caps = "none"
			}
			if t.PerTool {
				caps += "  (per tool)"
			}
			fmt.Fprintf(opts.Env.Out, "  %s  %s\n", show(t.Name), caps)
		}
	}
	return nil
}

func listed(s *mcpclient.Server) listedServer {
	c := s.Config()
	l := listedServer{Name: c.Name, Transport: c.Kind(), Status: "connected", Tools: []listedTool{}}
	switch {
	case c.Disabled:
		l.Status = "disabled"
		return l
	case s.Err != nil:
		l.Status, l.Error = "failed", s.Err.Error()
		return l
	}
	info := s.Info(nil)
	l.ServerName, l.ServerVersion, l.ProtocolVersion = info.ServerName, info.ServerVersion, info.ProtocolVersion
	for _, t := range s.Tools() {
		_, perTool := c.ToolCapabilities[t.Remote()]
		l.Tools = append(l.Tools, listedTool{Name: t.Spec().Name, Remote: t.Remote(), Capabilities: mcpclient.CapabilityList(t.Capabilities()), PerTool: perTool})
	}
	return l
}
