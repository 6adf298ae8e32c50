package inspectlog

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Sample is one sample: EvalSample.
type Sample struct {
	ID          string            `json:"id"`
	Epoch       int               `json:"epoch"`
	Input       string            `json:"input"`
	Target      string            `json:"target"`
	Messages    []Message         `json:"messages"`
	Output      Output            `json:"output"`
	Scores      map[string]Grade  `json:"scores,omitempty"`
	Metadata    map[string]any    `json:"metadata"`
	ModelUsage  map[string]Usage  `json:"model_usage"`
	StartedAt   string            `json:"started_at,omitempty"`
	CompletedAt string            `json:"completed_at,omitempty"`
	TotalTime   *float64          `json:"total_time,omitempty"`
	Error       *SampleError      `json:"error,omitempty"`
	Attachments map[string]string `json:"attachments,omitempty"`

	started, completed time.Time
}

// SampleError is why a sample has no outcome: EvalError.
type SampleError struct {
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
	// TracebackANSI is the traceback with colour codes; mecha has none.
	TracebackANSI string `json:"traceback_ansi"`
}

// Grade is a sample's score by one scorer: Score.
type Grade struct {
	Value       any            `json:"value"`
	Answer      string         `json:"answer,omitempty"`
	Explanation string         `json:"explanation,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// Message is a chat message: ChatMessageSystem, User, Assistant or Tool,
// by Role.
type Message struct {
	Role       string         `json:"role"`
	Content    any            `json:"content"` // a string, or []Content
	Source     string         `json:"source,omitempty"`
	ToolCalls  []ToolCall     `json:"tool_calls,omitempty"`
	Model      string         `json:"model,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Function   string         `json:"function,omitempty"`
	Error      *ToolError     `json:"error,omitempty"`
	Metadata   map[string]any `json:"metadata,omitempty"`
}

// Content is a part of a message: ContentText or ContentReasoning.
type Content struct {
	Type      string `json:"type"` // text, reasoning
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	Signature string `json:"signature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
}

// ToolCall is a call an assistant message makes: ToolCall.
type ToolCall struct {
	ID         string          `json:"id"`
	Function   string          `json:"function"`
	Arguments  json.RawMessage `json:"arguments"`
	Type       string          `json:"type"`
	ParseError string          `json:"parse_error,omitempty"`
}

// ToolError is a failed tool call's error: ToolCallError.
type ToolError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// Output is the sample's last answer: ModelOutput.
type Output struct {
	Model      string   `json:"model"`
	Choices    []Choice `json:"choices"`
	Completion string   `json:"completion"`
	Usage      *Usage   `json:"usage,omitempty"`
}

// Choice is one answer and why it stopped: ChatCompletionChoice.
type Choice struct {
	Message    Message `json:"message"`
	StopReason string  `json:"stop_reason"`
}

// FromSession makes a session one sample (epoch 1): see the package
// documentation. Prices give each model's cost (nil: none).
func FromSession(s *session.Session, prices pricing.Table) Sample {
	c := &converter{s: s, names: map[string]string{}}
	sm := Sample{ID: s.Meta.ID, Epoch: 1, Messages: []Message{}, ModelUsage: map[string]Usage{}, Metadata: metadata(s)}
	var taint transcript.Taint
	var stop string
	tainted := false
	for _, r := range s.Records {
		c.see(r)
		switch r := r.(type) {
		case *transcript.Config:
			c.config(r)
		case *transcript.Message:
			c.message(r)
			if sm.Input == "" && r.Role == transcript.RoleUser && !hasResults(r) {
				sm.Input = transcript.TextOf(r.Content)
			}
		case *transcript.Taint:
			taint, tainted = taint.Merge(*r), true
		case *transcript.Summary:
			provider, model := names(r.Provider, r.Model, s.Meta)
			u := usage(r.Usage)
			if c, ok := prices.Cost(provider, model, r.Usage); ok {
				u.TotalCost = &c
			}
			key := provider + "/" + model
			sm.ModelUsage[key] = sm.ModelUsage[key].add(u)
			stop = r.StopReason
		}
	}
	sm.Messages = c.out
	if tainted {
		sm.Metadata["taint"] = map[string]bool{"private": taint.Private, "untrusted": taint.Untrusted}
	}
	sm.Output = c.output(stop)
	sm.started, sm.completed = s.Meta.CreatedAt, c.last
	if sm.completed.Before(sm.started) {
		sm.completed = sm.started
	}
	if !sm.started.IsZero() {
		sm.StartedAt, sm.CompletedAt = stamp(sm.started), stamp(sm.completed)
		d := sm.completed.Sub(sm.started).Seconds()
		sm.TotalTime = &d
	}
	return sm
}

// metadata is mecha's own about a session: ids, what it is, who ran it.
func metadata(s *session.Session) map[string]any {
	m := s.Meta
	md := map[string]any{"mecha_session": m.ID, "title": m.Title, "provider": m.Provider, "model": m.Model, "workspace": m.Workspace}
	if m.ReplayOf != "" {
		md["replay_of"] = m.ReplayOf
	}
	if m.RerunOf != "" {
		md["rerun_of"] = m.RerunOf
	}
	if m.ReflectsOn != "" {
		md["reflects_on"] = m.ReflectsOn
	}
	if m.Parent != nil {
		md["parent"] = map[string]string{"session": m.Parent.Session, "call_id": m.Parent.CallID}
	}
	if m.ImportedFrom != nil {
		md["imported_from"] = m.ImportedFrom
	}
	if s.Skipped > 0 {
		md["lines_skipped"] = s.Skipped
	}
	return md
}

// converter turns records into chat messages, in order.
type converter struct {
	s      *session.Session
	out    []Message
	model  string            // the model of the current attach
	prompt *string           // the system prompt in effect
	names  map[string]string // tool call id -> tool name
	last   time.Time
	answer *Message // the last assistant message
	stop   string   // its stop reason, in its provider's words ("": none recorded)
}

// see notes the time of a record.
func (c *converter) see(r transcript.Record) {
	var t time.Time
	switch r := r.(type) {
	case *transcript.Message:
		t = r.At
	case *transcript.Config:
		t = r.At
	case *transcript.Summary:
		t = r.At
	case *transcript.Taint:
		t = r.At
	}
	if t.After(c.last) {
		c.last = t
	}
}

// config opens an attach: its model, and its system prompt when it is the
// first or differs from the one before.
func (c *converter) config(rc *transcript.Config) {
	c.model = rc.Model
	if rc.SystemPrompt == nil || c.prompt != nil && *c.prompt == *rc.SystemPrompt {
		return
	}
	c.prompt = rc.SystemPrompt
	c.out = append(c.out, Message{Role: "system", Content: *rc.SystemPrompt})
}

// message converts one transcript message: a user's into a user message
// and a tool message per result, an assistant's into one message.
func (c *converter) message(m *transcript.Message) {
	if m.Role != transcript.RoleAssistant {
		var text []string
		for _, b := range m.Content {
			switch b.Type {
			case transcript.BlockToolResult:
				msg := Message{Role: "tool", Content: b.Content, ToolCallID: b.ToolUseID, Function: c.names[b.ToolUseID]}
				if b.IsError {
					msg.Error = &ToolError{Type: "unknown", Message: b.Content}
				}
				c.out = append(c.out, msg)
			case transcript.BlockText:
				text = append(text, b.Text)
			}
		}
		if len(text) > 0 {
			role := "user"
			if m.Role != transcript.RoleUser {
				role = m.Role
			}
			c.out = append(c.out, Message{Role: role, Content: strings.Join(text, "\n"), Source: "input"})
		}
		return
	}
	msg := Message{Role: "assistant", Model: c.model, Source: "generate"}
	var parts []Content
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			parts = append(parts, Content{Type: "text", Text: b.Text})
		case transcript.BlockThinking:
			parts = append(parts, Content{Type: "reasoning", Reasoning: b.Thinking, Signature: b.Signature})
		case transcript.BlockToolUse:
			c.names[b.ID] = b.Name
			msg.ToolCalls = append(msg.ToolCalls, toolCall(b))
		case "redacted_thinking":
			parts = append(parts, Content{Type: "reasoning", Redacted: true})
		}
	}
	switch {
	case len(parts) == 0:
		msg.Content = ""
	case len(parts) == 1 && parts[0].Type == "text":
		msg.Content = parts[0].Text
	default:
		msg.Content = parts
	}
	c.out = append(c.out, msg)
	c.answer, c.stop = &c.out[len(c.out)-1], m.StopReason
}

// toolCall is a tool_use block as a call: its input must be an object,
// else it is given whole as a parse error.
func toolCall(b transcript.Block) ToolCall {
	tc := ToolCall{ID: b.ID, Function: b.Name, Arguments: b.Input, Type: "function"}
	var args map[string]json.RawMessage
	if json.Unmarshal(b.Input, &args) != nil || args == nil {
		tc.Arguments = json.RawMessage("{}")
		tc.ParseError = "the recorded input is not a JSON object: " + string(b.Input)
	}
	return tc
}

// output is the last assistant message as the sample's output, stopped
// for the reason its provider gave (else the run's summary's).
func (c *converter) output(stop string) Output {
	if c.stop != "" {
		stop = c.stop
	}
	out := Output{Model: c.model, Choices: []Choice{}}
	if c.answer == nil {
		return out
	}
	msg := *c.answer
	msg.Source = ""
	out.Choices = []Choice{{Message: msg, StopReason: stopReason(stop, msg)}}
	if s, ok := msg.Content.(string); ok {
		out.Completion = s
	} else if parts, ok := msg.Content.([]Content); ok {
		for _, p := range parts {
			if p.Type == "text" {
				out.Completion += p.Text
			}
		}
	}
	return out
}

// stopReason is a stop reason (mecha's, or a provider's own: Anthropic's
// stop_reason, Chat Completions' finish_reason) as one of Inspect's.
func stopReason(stop string, last Message) string {
	switch stop {
	case "end_turn", "stop", "stop_sequence", "":
		if len(last.ToolCalls) > 0 {
			return "tool_calls"
		}
		if stop == "" {
			return "unknown"
		}
		return "stop"
	case "max_tokens", "length":
		return "max_tokens"
	case "tool_use", "tool_calls":
		return "tool_calls"
	case "content_filter", "refusal":
		return "content_filter"
	}
	return "unknown"
}

func hasResults(m *transcript.Message) bool {
	for _, b := range m.Content {
		if b.Type == transcript.BlockToolResult {
			return true
		}
	}
	return false
}

// names are a summary's provider and model (the header's when the
// summary predates naming them); Inspect names a model provider/model.
func names(provider, model string, m transcript.Meta) (string, string) {
	if provider == "" {
		provider = m.Provider
	}
	if model == "" {
		model = m.Model
	}
	return provider, model
}

func usage(u transcript.Usage) Usage {
	in := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
	cr, cw := u.CacheReadTokens, u.CacheWriteTokens
	return Usage{InputTokens: in, OutputTokens: u.OutputTokens, TotalTokens: in + u.OutputTokens, InputCacheRead: &cr, InputCacheWrite: &cw}
}

// runID is a stable id for a log: the same task, model, time and samples
// give the same id.
func runID(task, model string, created time.Time, ids []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s", task, model, created.UTC().Format(time.RFC3339Nano), strings.Join(ids, "\x00"))
	return strings.TrimRight(base64.RawURLEncoding.EncodeToString(h.Sum(nil))[:22], "-_")
}
