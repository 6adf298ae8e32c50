package fakellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/mecha-agent/mecha/record/transcript"
)

// Script is the sequence of turns the server plays: each model request
// consumes the next turn, whichever endpoint it reaches.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn is one answer, or one fault. See the package documentation for
// what each field does on each wire.
type Turn struct {
	// The answer.
	Text             string            `json:"text,omitempty"`
	Thinking         string            `json:"thinking,omitempty"`
	Signature        string            `json:"signature,omitempty"`
	RedactedThinking string            `json:"redacted_thinking,omitempty"`
	ToolCalls        []ToolCall        `json:"tool_calls,omitempty"`
	Usage            *transcript.Usage `json:"usage,omitempty"`
	StopReason       string            `json:"stop_reason,omitempty"`
	Model            string            `json:"model,omitempty"`

	// An HTTP error instead of the answer.
	Status       int    `json:"status,omitempty"`
	ErrorType    string `json:"error_type,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	Body         string `json:"body,omitempty"`
	RetryAfter   string `json:"retry_after,omitempty"`
	// ContentType is the Content-Type Body is sent with (default
	// application/json). Body without Status is a 200 answer: a captive
	// portal's login page, a proxy's notice.
	ContentType string `json:"content_type,omitempty"`
	// EchoKey appends the key the request carried to the error message, as
	// careless servers do, so tests can check that clients redact it.
	EchoKey bool `json:"echo_key,omitempty"`

	// Faults in the stream, counted in events from 0.
	CutAfter       *int         `json:"cut_after,omitempty"`
	DropAfter      *int         `json:"drop_after,omitempty"`
	MalformedAfter *int         `json:"malformed_after,omitempty"`
	StreamError    *StreamError `json:"stream_error,omitempty"`
	// PingAfter sends that many events, then only keep-alives (events or
	// comments that carry no part of the answer) until the client goes
	// away: a server that is alive but never finishes.
	PingAfter *int `json:"ping_after,omitempty"`

	// Hang accepts the request and never answers, not even a status line,
	// until the client goes away.
	Hang bool `json:"hang,omitempty"`

	// DelayMS waits before answering (the request's cancellation ends the wait).
	DelayMS int `json:"delay_ms,omitempty"`
}

// ToolCall is a tool call of an answer.
type ToolCall struct {
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
	// Arguments, when set, is sent verbatim as the arguments text in place
	// of Input, valid JSON or not.
	Arguments *string `json:"arguments,omitempty"`
}

// StreamError is an error event sent in the stream after After events.
type StreamError struct {
	After   int    `json:"after"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// LoadScript reads a script file.
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("fakellm: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

// ParseScript reads a script, refusing unknown fields so that a typo does
// not silently become an empty turn.
func ParseScript(data []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("fakellm: script: %w", err)
	}
	if dec.More() {
		return nil, errors.New("fakellm: script: text after the JSON object")
	}
	for i := range s.Turns {
		if err := s.Turns[i].check(); err != nil {
			return nil, fmt.Errorf("fakellm: script: turn %d: %w", i+1, err)
		}
	}
	return &s, nil
}

func (t *Turn) check() error {
	faults := 0
	for _, p := range []*int{t.CutAfter, t.DropAfter, t.MalformedAfter, t.PingAfter} {
		if p != nil {
			faults++
			if *p < 0 {
				return errors.New("a fault's event count is negative")
			}
		}
	}
	if t.StreamError != nil {
		faults++
		if t.StreamError.After < 0 {
			return errors.New("stream_error.after is negative")
		}
	}
	if faults > 1 {
		return errors.New("at most one of cut_after, drop_after, malformed_after, ping_after and stream_error")
	}
	if t.ContentType != "" && t.Body == "" {
		return errors.New("content_type is the type of a body, and there is none")
	}
	if t.Body != "" && faults > 0 {
		return errors.New("a turn with a body has no stream fault")
	}
	if t.Hang && (t.Status != 0 || t.Body != "" || faults > 0 || t.DelayMS != 0) {
		return errors.New("a turn that hangs sends nothing else")
	}
	if t.Status != 0 {
		if t.Status < 400 || t.Status > 599 {
			return fmt.Errorf("status %d is not an error status", t.Status)
		}
		if faults > 0 {
			return errors.New("a turn with a status has no stream fault")
		}
	}
	if t.DelayMS < 0 {
		return errors.New("delay_ms is negative")
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

// arguments returns the arguments text of a call.
func (c *ToolCall) arguments() string {
	if c.Arguments != nil {
		return *c.Arguments
	}
	in := bytes.TrimSpace(c.Input)
	if len(in) == 0 {
		return "{}"
	}
	var buf bytes.Buffer
	if json.Compact(&buf, in) != nil {
		return string(in)
	}
	return buf.String()
}

// stopReason returns the neutral stop reason of an answer.
func (t *Turn) stopReason() string {
	switch {
	case t.StopReason != "":
		return t.StopReason
	case len(t.ToolCalls) > 0:
		return "tool_use"
	}
	return "end_turn"
}

// usage returns the turn's usage, or one estimated from byte counts.
func (t *Turn) usage(requestBytes int) transcript.Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	out := len(t.Text) + len(t.Thinking)
	for i := range t.ToolCalls {
		out += len(t.ToolCalls[i].Name) + len(t.ToolCalls[i].arguments())
	}
	return transcript.Usage{InputTokens: uint64(max(1, requestBytes/4)), OutputTokens: uint64(max(1, out/4))}
}
