package toolcmd

import (
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

// spec states how the servers of a surface differ from a run's: the
// ad-hoc server alone, when one is given.
func (s *servers) spec(spec *harness.SurfaceSpec) {
	spec.MCP = s.MCP
	if s.adHoc() {
		spec.MCP = harness.MCP{Off: true}
		spec.Servers = []mcpclient.ServerConfig{s.adHocConfig()}
	}
}
