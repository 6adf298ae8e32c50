package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/mecha-agent/mecha/internal/credential"

	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// MCPServers returns the configured MCP servers: config.toml's
// [mcp.servers.NAME] tables by name, then each file's. A name defined
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
			return c, fmt.Errorf("config: %s: mcp.servers.%s.capabilities: %w", path, name, err)
		}
		c.Capabilities = &caps
	}
	tc, err := mcpclient.ParseToolCapabilities(s.ToolCapabilities)
	if err != nil {
		return c, fmt.Errorf("config: %s: mcp.servers.%s.tool_capabilities.%w", path, name, err)
	}
	c.ToolCapabilities = tc
	if s.StartupTimeoutS < 0 || s.ToolTimeoutS < 0 {
		return c, fmt.Errorf("config: %s: mcp.servers.%s: timeouts are seconds more than 0", path, name)
	}
	return c, c.Validate()
}

// StartMCP starts the enabled servers in parallel. A server that fails
// costs one line on stderr and the command goes on without its tools.
// Stdio servers start in dir with mecha's environment less anything that
// looks like a credential (a server that needs one gets it through its
// env table), and their stderr goes to $MECHA_HOME/logs/mcp-<server>.log.
func StartMCP(ctx context.Context, w *World, servers []mcpclient.ServerConfig, dir string) *mcpclient.Set {
	set := ConnectMCP(ctx, w, servers, dir)
	for _, s := range set.Servers() {
		if s.Err != nil {
			fmt.Fprintf(w.errw(), "mcp: server %q did not start: %v; going on without its tools\n", s.Config().Name, s.Err)
		}
		for _, warning := range s.Warnings {
			fmt.Fprintf(w.errw(), "mcp: server %q: %s\n", s.Config().Name, warning)
		}
	}
	return set
}

// ConnectMCP starts servers as StartMCP does but says nothing: the caller
// reports each server's outcome itself (mcp list shows them all).
func ConnectMCP(ctx context.Context, w *World, servers []mcpclient.ServerConfig, dir string) *mcpclient.Set {
	return mcpclient.Start(ctx, servers, MCPOptions(w, dir))
}

// MCPOptions are the options servers start with (see StartMCP).
func MCPOptions(w *World, dir string) mcpclient.Options {
	home, _ := w.Home()
	logs := ""
	if home != "" {
		logs = filepath.Join(home, "logs")
	}
	return mcpclient.Options{Getenv: w.getenv, Environ: credential.Scrub(w.environ()), Secrets: Secrets(w), Dir: dir,
		LogDir: logs, HTTPClient: w.client(), ClientVersion: w.Version}
}

// StartMCPFor starts the servers m asks for: config.toml's and those of
// its files; none when it is Off. The returned Set is never nil; close
// it.
func StartMCPFor(ctx context.Context, w *World, cfg *config.Config, m MCP, dir string) (*mcpclient.Set, error) {
	if m.Off {
		return &mcpclient.Set{}, nil
	}
	servers, err := MCPServers(cfg, m.Files)
	if err != nil {
		return nil, err
	}
	return StartMCP(ctx, w, servers, dir), nil
}

// WorkspaceMCPNote says, in one line, that the workspace has a .mcp.json
// that is not loaded, unless it was given with --mcp-config or MCP is off.
func WorkspaceMCPNote(w *World, workspace string, m MCP) {
	p := filepath.Join(workspace, ".mcp.json")
	if m.Off {
		return
	}
	if _, err := os.Stat(p); err != nil {
		return
	}
	for _, g := range m.Files {
		if a, err := filepath.Abs(g); err == nil && a == p {
			return
		}
	}
	fmt.Fprintf(w.errw(), "note: %s is not loaded on its own (it can start any program); to use its servers: --mcp-config %s\n", p, p)
}
