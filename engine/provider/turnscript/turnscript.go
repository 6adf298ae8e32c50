package turnscript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Script is a sequence of turns: each model call plays the next one.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Turn is one scripted answer, or one failure. The package documentation
// says what each field does and which reader plays it.
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

	// A provider's error instead of the answer (the mock provider).
	Error *Error `json:"error,omitempty"`

	// An HTTP error, or a raw body, instead of the answer (fakellm).
	Status       int    `json:"status,omitempty"`
	ErrorType    string `json:"error_type,omitempty"`
	ErrorMessage string `json:"error_message,omitempty"`
	Body         string `json:"body,omitempty"`
	BodyFile     string `json:"body_file,omitempty"`
	ContentType  string `json:"content_type,omitempty"`
	RetryAfter   string `json:"retry_after,omitempty"`
	EchoKey      bool   `json:"echo_key,omitempty"`

	// Faults in the stream, counted in events from 0 (fakellm).
	CutAfter       *int         `json:"cut_after,omitempty"`
	DropAfter      *int         `json:"drop_after,omitempty"`
	MalformedAfter *int         `json:"malformed_after,omitempty"`
	StreamError    *StreamError `json:"stream_error,omitempty"`
	PingAfter      *int         `json:"ping_after,omitempty"`
	Hang           bool         `json:"hang,omitempty"`
	DelayMS        int          `json:"delay_ms,omitempty"`
}

// ToolCall is a tool call of an answer.
type ToolCall struct {
	ID    string          `json:"id,omitempty"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input,omitempty"`
	// Arguments, when set, is sent verbatim as the arguments text in place
	// of Input, valid JSON or not (fakellm).
	Arguments *string `json:"arguments,omitempty"`
}

// Error is the provider error a turn fails with (the mock provider).
type Error struct {
	Status       int    `json:"status,omitempty"`
	Type         string `json:"type,omitempty"`
	Message      string `json:"message"`
	Retryable    bool   `json:"retryable,omitempty"`
	RetryAfterMS int    `json:"retry_after_ms,omitempty"`
}

// StreamError is an error event sent in the stream after After events
// (fakellm).
type StreamError struct {
	After   int    `json:"after"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Reader is a program that plays scripts, and what of the format it plays.
type Reader struct {
	// Prefix begins its errors: "mock" gives "mock: script: ...".
	Prefix string
	// Name says who does not play a field: "the mock provider".
	Name string
	// Plays lists the fields it plays by their JSON names; a tool call's
	// field is named "tool_calls.id". A script that sets any other field
	// is refused.
	Plays []string
	// StopReasons, when not nil, are the only stop reasons it plays.
	StopReasons []string
}

// maxScript bounds a script file.
const maxScript = 64 << 20

// Load reads a script file (a regular file of at most 64 MiB) for r; a
// body_file is read from the script's directory.
func Load(path string, r Reader) (*Script, error) {
	data, err := safeopen.ReadFile(path, maxScript)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.Prefix, err)
	}
	s, err := parse(data, r, filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%w (in %s)", err, path)
	}
	return s, nil
}

// Parse reads a script for r. Unknown fields are refused, so that a typo
// does not silently become an empty turn, and so are fields r does not
// play, so that a script does not silently mean less than it says. A
// body_file is read from the working directory.
func Parse(data []byte, r Reader) (*Script, error) { return parse(data, r, "") }

func parse(data []byte, r Reader, dir string) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: script: %w", r.Prefix, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: script: text after the JSON object", r.Prefix)
	}
	for i := range s.Turns {
		if err := s.Turns[i].check(r); err != nil {
			return nil, fmt.Errorf("%s: script: turn %d: %w", r.Prefix, i+1, err)
		}
		if f := s.Turns[i].BodyFile; f != "" {
			if !filepath.IsAbs(f) {
				f = filepath.Join(dir, f)
			}
			b, err := safeopen.ReadFile(f, maxScript)
			if err != nil {
				return nil, fmt.Errorf("%s: script: turn %d: body_file: %w", r.Prefix, i+1, err)
			}
			s.Turns[i].Body = string(b)
		}
	}
	return &s, nil
}

// check refuses what r does not play, then what no reader could.
func (t *Turn) check(r Reader) error {
	for _, f := range t.fields() {
		if !slices.Contains(r.Plays, f) {
			return fmt.Errorf("%s is not played by %s", f, r.Name)
		}
	}
	if r.StopReasons != nil && t.StopReason != "" && !slices.Contains(r.StopReasons, t.StopReason) {
		return fmt.Errorf("stop_reason %q is not played by %s (only %s)", t.StopReason, r.Name, strings.Join(r.StopReasons, ", "))
	}
	return t.valid()
}

// fields lists the JSON names of the fields t sets, in the order of the
// struct, with a tool call's as "tool_calls.name".
func (t *Turn) fields() []string {
	out := setFields(reflect.ValueOf(t).Elem(), "")
	for i := range t.ToolCalls {
		for _, f := range setFields(reflect.ValueOf(&t.ToolCalls[i]).Elem(), "tool_calls.") {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

func setFields(v reflect.Value, prefix string) []string {
	var out []string
	for i := range v.NumField() {
		name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ",")
		if name != "" && !v.Field(i).IsZero() {
			out = append(out, prefix+name)
		}
	}
	return out
}

// valid refuses what no reader could play: contradictions, counts out
// of range, a call without a name or with an input that is not an object.
func (t *Turn) valid() error {
	if t.Error != nil {
		if t.Text != "" || t.Thinking != "" || len(t.ToolCalls) > 0 {
			return errors.New("an error turn has no text, thinking or tool calls")
		}
		if t.Error.Message == "" {
			return errors.New("error without a message")
		}
	}
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
	if t.Body != "" && t.BodyFile != "" {
		return errors.New("a turn has a body or a body_file, not both")
	}
	body := t.Body != "" || t.BodyFile != ""
	if t.ContentType != "" && !body {
		return errors.New("content_type is the type of a body, and there is none")
	}
	if body && faults > 0 {
		return errors.New("a turn with a body has no stream fault")
	}
	if t.Hang && (t.Status != 0 || body || faults > 0 || t.DelayMS != 0) {
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

// Stop returns the turn's stop reason: stop_reason when set, otherwise
// tool_use when it calls tools and end_turn when it does not.
func (t *Turn) Stop() string {
	switch {
	case t.StopReason != "":
		return t.StopReason
	case len(t.ToolCalls) > 0:
		return provider.StopToolUse
	}
	return provider.StopEndTurn
}

// InputJSON returns the call's input compacted, or {} when there is none.
func (c *ToolCall) InputJSON() json.RawMessage {
	var buf bytes.Buffer
	if len(bytes.TrimSpace(c.Input)) == 0 || json.Compact(&buf, c.Input) != nil {
		return json.RawMessage(`{}`)
	}
	return buf.Bytes()
}

// ArgumentsText returns the arguments text sent for the call: Arguments
// verbatim when set, otherwise the input compacted.
func (c *ToolCall) ArgumentsText() string {
	if c.Arguments != nil {
		return *c.Arguments
	}
	return string(c.InputJSON())
}

// UsageFor returns the turn's usage, or, when it sets none, one estimated
// from byte counts: a quarter of requestBytes in and of the answer's bytes
// (text, thinking, each call's name and arguments) out, each at least 1.
func (t *Turn) UsageFor(requestBytes int) transcript.Usage {
	if t.Usage != nil {
		return *t.Usage
	}
	out := len(t.Text) + len(t.Thinking)
	for i := range t.ToolCalls {
		out += len(t.ToolCalls[i].Name) + len(t.ToolCalls[i].ArgumentsText())
	}
	return transcript.Usage{InputTokens: tokens(requestBytes), OutputTokens: tokens(out)}
}

// tokens estimates a token count as a quarter of the bytes, at least 1.
func tokens(bytes int) uint64 { return uint64(max(1, bytes/4)) }
