package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// Provider sends one request to a model and returns its whole answer.
// Implementations stream when the wire protocol allows and assemble the
// stream into a Response; OnDelta, when set, sees text as it arrives.
type Provider interface {
	// Name is the provider's name as given to -p: anthropic, openai, local, mock.
	Name() string
	// DefaultModel is the model used when none is configured.
	DefaultModel() string
	Complete(ctx context.Context, req *Request) (*Response, error)
}

// ToolSpec describes one tool to the model.
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage // a JSON Schema object
}

// Request is a provider-neutral model request. Every field that shapes the
// request is here so that it can be recorded and replayed.
type Request struct {
	Model    string
	System   string // empty: no system prompt
	Messages []transcript.Message
	Tools    []ToolSpec
	// MaxTokens bounds one response.
	MaxTokens int
	// Temperature and Seed are sent only when set; nil lets the server choose.
	Temperature *float64
	Seed        *uint64
	// Effort is "", "low", "medium" or "high" (reasoning_effort / thinking budget).
	Effort string
	// Thinking asks for extended thinking where the provider supports it.
	Thinking bool
	// CachePrompt asks the server to cache the prompt prefix
	// (Anthropic cache_control, llama-server cache_prompt).
	CachePrompt bool
	// OnDelta, when non-nil, is called with text and thinking as they stream.
	OnDelta func(d Delta) `json:"-"`
}

// Settings of a request that a provider may not send, named as a config
// record names them. Each client says which it does not send (its
// Unsent), so that the record holds null for them: a setting that shaped
// no request is not recorded as if it had.
const (
	SettingTemperature = "temperature"
	SettingSeed        = "seed"
	SettingEffort      = "effort"
	SettingThinking    = "thinking"
	SettingCachePrompt = "cache_prompt"
)

// Delta is a piece of streamed output.
type Delta struct {
	Kind string // "text" or "thinking"
	Text string
}

// Stop reasons, normalised across providers.
const (
	StopEndTurn   = "end_turn"
	StopToolUse   = "tool_use"
	StopMaxTokens = "max_tokens"
	// StopPauseTurn is a turn the model paused (a long run of server-side
	// tools): sent back as it is after the conversation, the answer lets
	// the model continue it.
	StopPauseTurn = "pause_turn"
	StopOther     = "other"
)

// Response is a model's whole answer to one request.
type Response struct {
	// Content holds thinking, text and tool_use blocks in the order
	// produced, and blocks of other types (server-side tools and their
	// results) kept verbatim, as they are sent back.
	Content []transcript.Block
	// StopReason is one of the Stop constants.
	StopReason string
	// NativeStopReason is the stop reason in the provider's own words, as
	// it sent it (stop_sequence, refusal, content_filter, ...); empty when
	// it sent none. The transcript records it on the assistant message.
	NativeStopReason string
	Usage            transcript.Usage
	// Model is the model that answered, as the server reported it.
	Model string
	// Skipped counts, by type, the parts of the answer the client received
	// and did not keep (OpenAI-protocol content parts other than text and
	// thinking: a reference, an image); nil when none. The loop says so.
	Skipped map[string]int `json:",omitempty"`
}

// ToolCalls returns the tool_use blocks of the response, in order.
func (r *Response) ToolCalls() []transcript.Block {
	var calls []transcript.Block
	for _, b := range r.Content {
		if b.Type == transcript.BlockToolUse {
			calls = append(calls, b)
		}
	}
	return calls
}

// Error is a failed request. Its message is one line naming the provider
// and never contains a credential.
type Error struct {
	Provider string
	Status   int    // HTTP status, 0 when the failure was not an HTTP answer
	Type     string // the provider's error type when it gave one (overloaded_error, rate_limit_error ...)
	Message  string
	// Retryable is true for rate limits, overloads and server errors.
	Retryable bool
	// RetryAfter is the server's retry-after, zero when it gave none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	s := e.Provider + ": "
	if e.Status != 0 {
		s += fmt.Sprintf("HTTP %d: ", e.Status)
	}
	if e.Type != "" {
		s += e.Type + ": "
	}
	return s + e.Message
}
