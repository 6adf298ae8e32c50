package replay

import (
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// mcpMissing is the refusal for recorded MCP tools that today's setup does
// not offer, naming each tool's server; "" when none of names came from an
// MCP server the recording names.
func mcpMissing(rc *transcript.Config, names []string, how string) string {
	var parts []string
	for _, n := range names {
		for _, s := range rc.MCPServers {
			for _, t := range s.Tools {
				if t == n {
					parts = append(parts, fmt.Sprintf("%q of MCP server %q", n, s.Name))
				}
			}
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("replay: the recording %s %s, which today's setup does not offer (is the server configured, enabled and started? --no-mcp offers none)",
		how, strings.Join(parts, ", "))
}

// mcpNotes notes each MCP server whose name or version differs from the
// one that answered in the recording. It is never nil.
func mcpNotes(s *session.Session, today func([]string) []transcript.MCPServer) []string {
	notes := []string{}
	if today == nil {
		return notes
	}
	now := map[string]transcript.MCPServer{}
	for _, t := range today(nil) {
		now[t.Name] = t
	}
	seen := map[string]bool{}
	for _, c := range s.Configs() {
		for _, rec := range c.MCPServers {
			t, ok := now[rec.Name]
			if !ok || seen[rec.Name] || t.ServerName == rec.ServerName && t.ServerVersion == rec.ServerVersion {
				continue
			}
			seen[rec.Name] = true
			notes = append(notes, fmt.Sprintf("MCP server %q was %s %s when recorded and is %s %s today; the recorded results are replayed as they were",
				rec.Name, rec.ServerName, rec.ServerVersion, t.ServerName, t.ServerVersion))
		}
	}
	return notes
}
