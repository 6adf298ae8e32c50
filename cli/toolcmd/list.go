package toolcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// ListOptions are the options of "mecha tool list".
type ListOptions struct {
	Env       *cmdkit.Env
	Workspace string
	JSON      bool
	// MCP are the MCP servers whose tools are listed too.
	MCP     servers
	Sandbox harness.Sandbox
}

// NewCmdList builds "mecha tool list".
func NewCmdList(env *cmdkit.Env, runF func(context.Context, *ListOptions) error) *cobra.Command {
	opts := &ListOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools a run would offer here, with their capabilities",
		Long: `List the tools a run would offer here: the built-ins, then the tools of
the MCP servers configured in config.toml and in --mcp-config files (each
server started in the workspace, then stopped; one that does not start
costs a line on stderr); --no-mcp lists no MCP tools. An ad-hoc server
(--mcp-name NAME with --mcp-command PROGRAM [--mcp-arg ARG ...] or
--mcp-url URL) is listed instead of the configured ones.`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.MCP.validate(); err != nil {
				return err
			}
			if err := attach.Usage(opts.surface().Validate()); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return listRun(cmd.Context(), opts)
		},
	}
	opts.MCP.flags(cmd)
	cmd.Flags().StringVarP(&opts.Workspace, "workspace", "w", "", "the workspace the tools would work in (default: the current directory)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, `print [{"name","description","input_schema","capabilities"}]`)
	attach.SandboxFlags(cmd, &opts.Sandbox)
	return cmd
}

// surface is the surface listed: a run's, in the workspace.
func (o *ListOptions) surface() harness.SurfaceSpec {
	spec := harness.SurfaceSpec{Workspace: o.Workspace, Sandbox: o.Sandbox}
	o.MCP.spec(&spec)
	return spec
}

// listed is one tool of --json.
type listed struct {
	Name         string          `json:"name"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"input_schema"`
	Capabilities capabilities    `json:"capabilities"`
}

type capabilities struct {
	ReadsWorkspace    bool `json:"reads_workspace"`
	ModifiesWorkspace bool `json:"modifies_workspace"`
	RunsCommands      bool `json:"runs_commands"`
	ReachesNetwork    bool `json:"reaches_network"`
	ActsOutward       bool `json:"acts_outward"`
	External          bool `json:"external"`
	// UntrustedWorkspace: what it reads of the workspace counts as
	// untrusted (the workspace is not trusted: mecha trust).
	UntrustedWorkspace bool `json:"untrusted_workspace"`
}

func listRun(ctx context.Context, opts *ListOptions) error {
	surf, err := harness.OpenSurface(ctx, attach.World(opts.Env), opts.surface())
	if err != nil {
		return err
	}
	defer surf.Close()
	reg := surf.Registry()
	var out []listed
	for _, t := range reg.Tools() {
		s, c := t.Spec(), t.Capabilities()
		out = append(out, listed{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema,
			Capabilities: capabilities{c.ReadsWorkspace, c.ModifiesWorkspace, c.RunsCommands, c.ReachesNetwork, c.ActsOutward, c.External,
				c.ReadsWorkspace && c.UntrustedWorkspace}})
	}
	if opts.JSON {
		return cmdkit.WriteJSON(opts.Env.Out, out)
	}
	tab := cmdkit.Table{}
	tab.Add("TOOL", "CAPABILITIES", "DESCRIPTION")
	for _, l := range out {
		// A description is an MCP server's words: shown, never acted on.
		first, _, _ := strings.Cut(l.Description, "\n")
		tab.Add(textfmt.VisibleLine(l.Name), capsText(reg, l.Name), textfmt.VisibleLine(first))
	}
	if err := tab.Write(opts.Env.Out, cmdkit.NewStyle(opts.Env)); err != nil {
		return err
	}
	_, err = fmt.Fprintln(opts.Env.Out, "calls marked * need permission: they ask, or run with --yes, or are refused with --read-only")
	return err
}

// capsText says what a tool may do in a few words: "reads", "writes*",
// "runs*,network*,acts*,external"; "untrusted" when what it reads of the
// workspace counts as untrusted (a workspace not trusted).
func capsText(reg *tool.Registry, name string) string {
	t, _ := reg.Get(name)
	c := t.Capabilities()
	var parts []string
	add := func(on bool, word string, gated bool) {
		if !on {
			return
		}
		if gated {
			word += "*"
		}
		parts = append(parts, word)
	}
	add(c.ReadsWorkspace, "reads", false)
	add(c.ModifiesWorkspace, "writes", true)
	add(c.RunsCommands, "runs", true)
	add(c.ReachesNetwork, "network", true)
	add(c.ActsOutward, "acts", true)
	add(c.External, "external", false)
	add(c.ReadsWorkspace && c.UntrustedWorkspace, "untrusted", false)
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}
