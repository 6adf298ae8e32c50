package cmdkit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// MCPFlags are the MCP flags of run, replay and regress.
type MCPFlags struct {
	// Files are the --mcp-config files, in order.
	Files []string
	// Off is --no-mcp: no MCP server is started.
	Off bool
}

// AddMCPFlags adds --mcp-config and --no-mcp to cmd.
func AddMCPFlags(cmd *cobra.Command, f *MCPFlags) {
	cmd.Flags().StringArrayVar(&f.Files, "mcp-config", nil, "also use the MCP servers of this .mcp.json `FILE` (repeatable)")
	cmd.Flags().BoolVar(&f.Off, "no-mcp", false, "offer no tools from MCP servers (start none)")
}

// MCPServers returns the configured MCP servers: config.toml's
// [mcpclient.servers.NAME] tables by name, then each file's. A name defined
// twice is an error.
func MCPServers(cfg *config.Config, files []string) ([]mcpclient.ServerConfig, error) {
	var fromConfig []mcpclient.ServerConfig
	names := make([]string, 0, len(cfg.MCP.Servers))
	for n := range cfg.MCP.Servers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c, err := serverConfig(n, cfg.MCP.Servers[n], cfg.Path)
		if err != nil {
			return nil, err
		}
		fromConfig = append(fromConfig, c)
	}
	lists := [][]mcpclient.ServerConfig{fromConfig}
	for _, f := range files {
		l, err := mcpclient.LoadFile(f)
		if err != nil {
			return nil, err
		}
		lists = append(lists, l)
	}
	return mcpclient.Merge(lists...)
}

func serverConfig(name string, s config.MCPServer, path string) (mcpclient.ServerConfig, error) {
	c := mcpclient.ServerConfig{Name: name, Command: s.Command, Args: s.Args, Env: s.Env, URL: s.URL, Headers: s.Headers,
		Transport: s.Transport, Disabled: s.Enabled != nil && !*s.Enabled, Tools: s.Tools, TrustAnnotations: s.TrustAnnotations,
		StartupTimeout: time.Duration(s.StartupTimeoutS) * time.Second, ToolTimeout: time.Duration(s.ToolTimeoutS) * time.Second,
		Source: path}
	if s.Capabilities != nil {
		caps, err := mcpclient.ParseCapabilities(s.Capabilities)
		if err != nil {
			return c, fmt.Errorf("config: %s: mcpclient.servers.%s.capabilities: %w", path, name, err)
		}
		c.Capabilities = &caps
	}
	if s.StartupTimeoutS < 0 || s.ToolTimeoutS < 0 {
		return c, fmt.Errorf("config: %s: mcpclient.servers.%s: timeouts are seconds more than 0", path, name)
	}
	return c, c.Validate()
}

// StartMCP starts the enabled servers in parallel. A server that fails
// costs one line on stderr and the command goes on without its tools.
// Stdio servers start in dir with mecha's environment less anything that
// looks like a credential (a server that needs one gets it through its
// env table), and their stderr goes to $MECHA_HOME/logs/mcp-<server>.log.
func StartMCP(ctx context.Context, env *Env, servers []mcpclient.ServerConfig, dir string) *mcpclient.Set {
	set := mcpclient.Start(ctx, servers, MCPOptions(env, dir))
	for _, s := range set.Servers() {
		if s.Err != nil {
			fmt.Fprintf(env.Err, "mcp: server %q did not start: %v; going on without its tools\n", s.Config().Name, s.Err)
		}
		for _, w := range s.Warnings {
			fmt.Fprintf(env.Err, "mcp: server %q: %s\n", s.Config().Name, w)
		}
	}
	return set
}

// MCPOptions are the options servers start with (see StartMCP).
func MCPOptions(env *Env, dir string) mcpclient.Options {
	home, _ := env.Home()
	logs := ""
	if home != "" {
		logs = filepath.Join(home, "logs")
	}
	return mcpclient.Options{Getenv: env.Var, Environ: ScrubbedEnv(env.Environment()), Dir: dir,
		LogDir: logs, HTTPClient: env.Client(), ClientVersion: Version()}
}

// StartMCPFor starts the servers a command's flags ask for: none with
// --no-mcpclient. The returned Set is never nil; close it.
func StartMCPFor(ctx context.Context, env *Env, cfg *config.Config, f MCPFlags, dir string) (*mcpclient.Set, error) {
	if f.Off {
		return &mcpclient.Set{}, nil
	}
	servers, err := MCPServers(cfg, f.Files)
	if err != nil {
		return nil, err
	}
	return StartMCP(ctx, env, servers, dir), nil
}

// WorkspaceMCPNote says, in one line, that the workspace has a .mcp.json
// that is not loaded, unless it was given with --mcp-config or MCP is off.
func WorkspaceMCPNote(env *Env, workspace string, f MCPFlags) {
	p := filepath.Join(workspace, ".mcp.json")
	if f.Off {
		return
	}
	if _, err := os.Stat(p); err != nil {
		return
	}
	for _, g := range f.Files {
		if a, err := filepath.Abs(g); err == nil && a == p {
			return
		}
	}
	fmt.Fprintf(env.Err, "note: %s is not loaded on its own (it can start any program); to use its servers: --mcp-config %s\n", p, p)
}
