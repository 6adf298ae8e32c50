package session

import (
	"strings"

	"github.com/mecha-agent/mecha/record/transcript"
)

// The kinds of session, as "mecha sessions list --kind" names them.
const (
	KindRun        = "run"        // a run or chat of mecha's own agent loop
	KindReplay     = "replay"     // "mecha replay" (meta replay_of)
	KindRerun      = "rerun"      // "mecha rerun" (meta rerun_of)
	KindReflection = "reflection" // a reflection or a distillation (meta reflects_on, distill)
	KindServe      = "serve"      // "mecha mcp serve"
	KindProxy      = "proxy"      // "mecha mcp proxy"
	KindImported   = "imported"   // "mecha import" (meta imported_from)
)

// Kinds lists every kind, in the order help texts name them.
var Kinds = []string{KindRun, KindReplay, KindRerun, KindReflection, KindServe, KindProxy, KindImported}

// Kind says what made a session, from its header alone. What the header
// names wins in this order: imported_from, replay_of, rerun_of, a
// reflection's reflects_on or distill, then an MCP server's session
// (provider "mcp", or a recorded MCP client), which is a proxy's when its
// title is the one "mecha mcp proxy" writes ("mcp proxy" or "mcp proxy:
// NAME"); anything else is a run. A child run (meta parent) is a run too:
// whether a session has a parent is a question of its own.
func Kind(m *transcript.Meta) string {
	switch {
	case m.ImportedFrom != nil:
		return KindImported
	case m.ReplayOf != "":
		return KindReplay
	case m.RerunOf != "":
		return KindRerun
	case m.ReflectsOn != "" || m.Distill:
		return KindReflection
	case m.Provider == "mcp" || m.MCPClient != nil:
		if m.Title == "mcp proxy" || strings.HasPrefix(m.Title, "mcp proxy: ") {
			return KindProxy
		}
		return KindServe
	}
	return KindRun
}
