package toolcmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// servers are the MCP flags of "mecha tool list" and "mecha tool call":
// the configured servers (with --mcp-config and --no-mcp, as in a run), or
// one ad-hoc server given word by word, the way a generated script names
// the server a recording used.
type servers struct {
	harness.MCP
	// Name, Command, Args, URL and Transport are the ad-hoc server.
	Name      string
	Command   string
	Args      []string
	URL       string
	Transport string
}

func (s *servers) flags(cmd *cobra.Command) {
	attach.MCPFlags(cmd, &s.MCP)
	f := cmd.Flags()
	f.StringVar(&s.Name, "mcp-name", "", "the ad-hoc server's `NAME`: its tools are mcp__NAME__TOOL")
	f.StringVar(&s.Command, "mcp-command", "", "start the ad-hoc server with this `PROGRAM` (one word, not split; arguments with --mcp-arg)")
	f.StringArrayVar(&s.Args, "mcp-arg", nil, "one `ARG`ument of --mcp-command, exactly as given (repeatable, in order)")
	f.StringVar(&s.URL, "mcp-url", "", "reach the ad-hoc server at this streamable HTTP `URL`")
	f.StringVar(&s.Transport, "mcp-transport", "", "the ad-hoc --mcp-url server's transport: http (default) or sse")
}

func (s *servers) adHoc() bool {
	return s.Name != "" || s.Command != "" || len(s.Args) > 0 || s.URL != "" || s.Transport != ""
}

// validate checks the flags before anything starts.
func (s *servers) validate() error {
	if !s.adHoc() {
		return nil
	}
	switch {
	case s.Off:
		return cmdkit.Usagef("--no-mcp does not go with an ad-hoc server (--mcp-name ...)")
	case len(s.Files) > 0:
		return cmdkit.Usagef("--mcp-config does not go with an ad-hoc server (--mcp-name ...): an ad-hoc server is used alone")
	case s.Name == "":
		return cmdkit.Usagef("an ad-hoc server needs --mcp-name NAME")
	case s.Command != "" && s.URL != "":
		return cmdkit.Usagef("--mcp-command and --mcp-url name two servers; give one")
	case s.Command == "" && s.URL == "":
		return cmdkit.Usagef("an ad-hoc server needs --mcp-command PROGRAM [--mcp-arg ARG ...] or --mcp-url URL")
	case len(s.Args) > 0 && s.Command == "":
		return cmdkit.Usagef("--mcp-arg goes with --mcp-command")
	case s.Transport != "" && s.URL == "":
		return cmdkit.Usagef("--mcp-transport goes with --mcp-url")
	}
	if s.Transport != "" && s.Transport != mcpclient.TransportHTTP && s.Transport != mcpclient.TransportSSE {
		return cmdkit.Usagef("--mcp-transport %q: want http or sse", s.Transport)
	}
	if err := s.adHocConfig().Validate(); err != nil {
		return &cmdkit.UsageError{Err: err}
	}
	return nil
}

func (s *servers) adHocConfig() mcpclient.ServerConfig {
	c := mcpclient.ServerConfig{Name: s.Name, Command: s.Command, Args: s.Args, URL: s.URL, Transport: s.Transport, Source: "the command line"}
	if c.Command != "" {
		c.Transport = mcpclient.TransportStdio
	}
	return c
}

// configs returns the servers the flags name: the ad-hoc one, none with
// --no-mcp, else the configured ones.
func (s *servers) configs(env *cmdkit.Env) ([]mcpclient.ServerConfig, error) {
	if s.adHoc() {
		return []mcpclient.ServerConfig{s.adHocConfig()}, nil
	}
	if s.Off {
		return nil, nil
	}
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	return harness.MCPServers(cfg, s.Files)
}

// start starts the servers whose tools keep(name of the server) wants
// (nil: all), in dir; with quiet, a server that fails costs no line on
// stderr (the caller says why). The Set is never nil; close it.
func (s *servers) start(ctx context.Context, env *cmdkit.Env, dir string, keep func(server string) bool, quiet bool) (*mcpclient.Set, []*mcpclient.Tool, error) {
	all, err := s.configs(env)
	if err != nil {
		return nil, nil, err
	}
	var want []mcpclient.ServerConfig
	for _, c := range all {
		if keep == nil || keep(c.Name) {
			want = append(want, c)
		}
	}
	if len(want) == 0 {
		return &mcpclient.Set{}, nil, nil
	}
	var set *mcpclient.Set
	if quiet {
		set = mcpclient.Start(ctx, want, harness.MCPOptions(attach.World(env), dir))
	} else {
		set = harness.StartMCP(ctx, attach.World(env), want, dir)
	}
	tools, err := set.Tools()
	if err != nil {
		set.Close()
		return nil, nil, err
	}
	return set, tools, nil
}

// serverFor reports whether a tool name may belong to a server: only
// those servers are started for one call.
func serverFor(name string) func(server string) bool {
	return func(server string) bool { return strings.HasPrefix(name, mcpclient.ServerPrefix(server)+"__") }
}

// startFailed says why the server a tool name would belong to is not
// there, when one failed to start or is disabled; nil otherwise.
func startFailed(set *mcpclient.Set, name string) error {
	for _, s := range set.Servers() {
		c := s.Config()
		if !serverFor(name)(c.Name) {
			continue
		}
		switch {
		case s.Err != nil:
			return fmt.Errorf("mcp: server %q, which would offer %s, did not start: %w", c.Name, name, s.Err)
		case c.Disabled:
			return fmt.Errorf("mcp: server %q, which would offer %s, is disabled (enabled = false)", c.Name, name)
		}
	}
	return nil
}
