package mock

import (
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/turnscript"
)

// The script format is turnscript's; these names keep the mock's callers
// short.
type (
	Script    = turnscript.Script
	Turn      = turnscript.Turn
	ToolCall  = turnscript.ToolCall
	TurnError = turnscript.Error
)

// reader is what the mock plays of the format: the answer (without a
// signature, redacted thinking or verbatim arguments), the four neutral
// stop reasons, and a provider error. The HTTP faults of the fake server
// are refused.
var reader = turnscript.Reader{
	Prefix: Name,
	Name:   "the mock provider",
	Plays: []string{
		"text", "thinking", "tool_calls", "tool_calls.id", "tool_calls.name", "tool_calls.input",
		"usage", "stop_reason", "model", "error",
	},
	StopReasons: []string{provider.StopEndTurn, provider.StopToolUse, provider.StopMaxTokens, provider.StopPauseTurn, provider.StopOther},
}

// LoadScript reads a script file (a regular file of at most 64 MiB) for
// the mock.
func LoadScript(path string) (*Script, error) { return turnscript.Load(path, reader) }

// ParseScript reads a script for the mock: unknown fields, and fields the
// mock does not play, are refused.
func ParseScript(data []byte) (*Script, error) { return turnscript.Parse(data, reader) }
