package mock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Script is a sequence of turns: each model call plays the next one.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn is one scripted model answer, or an error when Error is set.
type Turn struct {
	Text      string     `json:"text,omitempty"`
	Thinking  string     `json:"thinking,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Usage, when nil, is derived from byte counts (see the package doc).
	Usage *transcript.Usage `json:"usage,omitempty"`
	// StopReason is end_turn, tool_use, max_tokens or other; empty means
	// tool_use when the turn calls tools and end_turn otherwise.
	StopReason string `json:"stop_reason,omitempty"`
	// Model is reported as the model that answered; empty means the
	// request's model, or DefaultModel.
	Model string     `json:"model,omitempty"`
	Error *TurnError `json:"error,omitempty"`
}

// ToolCall is a scripted tool call. An empty ID is generated: call_N, where
// N counts the tool calls of the conversation, this one included.
type ToolCall struct {
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
}

// TurnError makes a turn fail with a *provider.Error built from it.
type TurnError struct {
	Status       int    `json:"status,omitempty"`
	Type         string `json:"type,omitempty"`
	Message      string `json:"message"`
	Retryable    bool   `json:"retryable,omitempty"`
	RetryAfterMS int    `json:"retry_after_ms,omitempty"`
}

// maxScript bounds a script file.
const maxScript = 64 << 20

// LoadScript reads a script file (a regular file of at most 64 MiB).
func LoadScript(path string) (*Script, error) {
	data, err := safeopen.ReadFile(path, maxScript)
	if err != nil {
		return nil, fmt.Errorf("mock: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

// ParseScript reads a script. Unknown fields are refused, so that a typo
// does not silently become an empty turn.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("mock: script: %w", err)
	}
	if dec.More() {
		return nil, errors.New("mock: script: text after the JSON object")
	}
	for i, t := range s.Turns {
		if err := t.check(); err != nil {
			return nil, fmt.Errorf("mock: script: turn %d: %w", i+1, err)
		}
	}
	return &s, nil
}

func (t *Turn) check() error {
	if t.Error != nil {
		if t.Text != "" || t.Thinking != "" || len(t.ToolCalls) > 0 {
			return errors.New("an error turn has no text, thinking or tool calls")
		}
		if t.Error.Message == "" {
			return errors.New("error without a message")
		}
		return nil
	}
	switch t.StopReason {
	case "", provider.StopEndTurn, provider.StopToolUse, provider.StopMaxTokens, provider.StopOther:
	default:
		return fmt.Errorf("stop_reason %q is not end_turn, tool_use, max_tokens or other", t.StopReason)
	}
	for j, c := range t.ToolCalls {
		if c.Name == "" {
			return fmt.Errorf("tool call %d has no name", j+1)
		}
		in := bytes.TrimSpace(c.Input)
		if len(in) > 0 && (in[0] != '{' || !json.Valid(in)) {
			return fmt.Errorf("tool call %d (%s): input is not a JSON object", j+1, c.Name)
		}
	}
	return nil
}
