package fakellm

import "github.com/mecha-agent/mecha/engine/provider/turnscript"

// The script format is turnscript's, the one the mock provider reads too;
// these names keep the tests that build scripts short.
type (
	Script      = turnscript.Script
	Turn        = turnscript.Turn
	ToolCall    = turnscript.ToolCall
	StreamError = turnscript.StreamError
)

// reader is what the server plays of the format: everything but the
// mock provider's error (a fault here is an HTTP status or a broken
// stream, given by status, body and the fault fields).
var reader = turnscript.Reader{
	Prefix: "fakellm",
	Name:   "the fakellm server",
	Plays: []string{
		"text", "thinking", "signature", "redacted_thinking",
		"tool_calls", "tool_calls.id", "tool_calls.name", "tool_calls.input", "tool_calls.arguments",
		"usage", "stop_reason", "model",
		"status", "error_type", "error_message", "body", "body_file", "content_type", "retry_after", "echo_key",
		"cut_after", "drop_after", "malformed_after", "stream_error", "ping_after", "hang", "delay_ms",
	},
}

// LoadScript reads a script file (a regular file of at most 64 MiB).
func LoadScript(path string) (*Script, error) { return turnscript.Load(path, reader) }

// ParseScript reads a script: unknown fields, and the field the server
// does not play (error), are refused.
func ParseScript(data []byte) (*Script, error) { return turnscript.Parse(data, reader) }
