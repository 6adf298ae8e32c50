package mcpclient

import (
	"fmt"
	"strings"
)

// MaxNameLen is the longest tool name the providers accept.
const MaxNameLen = 64

// NamePrefix starts the name of every MCP tool.
const NamePrefix = "mcp__"

// ToolName is the name a server's tool is offered under:
// mcp__<server>__<tool>, each part sanitised to [A-Za-z0-9_-] and the
// whole cut to MaxNameLen bytes. Two tools can end up with one name; the
// Set refuses that, naming both.
func ToolName(server, toolName string) string {
	n := ServerPrefix(server) + "__" + sanitize(toolName)
	if len(n) > MaxNameLen {
		n = n[:MaxNameLen]
	}
	return n
}

// ServerPrefix is the name that stands for all of a server's tools in
// --tool: mcp__<server>.
func ServerPrefix(server string) string { return NamePrefix + sanitize(server) }

func sanitize(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// ExpandNames replaces each mcp__<server> in names by the names of that
// server's offered tools (in the server's order); other names stay. A
// server prefix that matches no tool stays as it is, for the registry to
// report as unknown.
func ExpandNames(names []string, tools []*Tool) []string {
	var out []string
	for _, n := range names {
		var all []string
		if strings.HasPrefix(n, NamePrefix) && !strings.Contains(n[len(NamePrefix):], "__") {
			for _, t := range tools {
				if ServerPrefix(t.server.cfg.Name) == n {
					all = append(all, t.name)
				}
			}
		}
		if len(all) == 0 {
			out = append(out, n)
			continue
		}
		out = append(out, all...)
	}
	return out
}

// clashError is two tools offered under one name.
func clashError(name string, a, b *Tool) error {
	return fmt.Errorf("mcp: two tools would be offered as %q: %q of server %q and %q of server %q (rename a server)",
		name, a.remote, a.server.cfg.Name, b.remote, b.server.cfg.Name)
}
