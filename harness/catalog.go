package harness

import (
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
)

// ToolDoc is a built-in tool's name and description.
type ToolDoc struct{ Name, Description string }

// BuiltinTools are the built-in tools, in the order a run offers them.
func BuiltinTools() []ToolDoc {
	var out []ToolDoc
	for _, t := range builtin.All(builtin.Workspace{}, builtin.Options{}) {
		s := t.Spec()
		out = append(out, ToolDoc{s.Name, s.Description})
	}
	return out
}

// BuiltinCapabilities returns what the built-in tool name declares it may
// do, the shell unconfined: the most it can do wherever it runs (a
// script's header says so of its calls). ok is false for a name that is
// not a built-in tool.
func BuiltinCapabilities(name string) (c tool.Capabilities, ok bool) {
	for _, t := range builtin.All(builtin.Workspace{}, builtin.Options{}) {
		if t.Spec().Name == name {
			return t.Capabilities(), true
		}
	}
	return c, false
}

// ServerDoc is a configured MCP server: its name, its kind (stdio or
// http), the prefix of its tools' names and whether it is disabled.
type ServerDoc struct {
	Name, Kind, Prefix string
	Disabled           bool
}

// ConfiguredServers are config.toml's MCP servers (none when it
// configures them wrongly).
func ConfiguredServers(cfg *config.Config) []ServerDoc {
	servers, _ := MCPServers(cfg, nil)
	var out []ServerDoc
	for _, s := range servers {
		out = append(out, ServerDoc{s.Name, s.Kind(), mcpclient.ServerPrefix(s.Name), s.Disabled})
	}
	return out
}
