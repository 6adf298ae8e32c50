package runcmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/transcript"
)

// output shows a run as it happens and reports how it ended, in one of
// four ways: --json (one object at the end), --stream-json (JSON lines as
// the run goes), a terminal's stream, or the answer printed at the end
// with the model's text between tool calls written to stderr as each
// response ends.
//
// The terminal's stream: a response's text is not known to be the final
// answer until the response ends (a tool call may follow it), so each
// response's text is written to stdout, the terminal a person watches, as
// it arrives. When the response turns out to call tools, that text was
// commentary between calls: it is also written to stderr when stderr is
// not a terminal (a log keeps it; a terminal already showed it). When it
// is the answer, it has been on stdout once and is not printed again,
// unless what streamed differs from what was recorded (a retried request
// streams again from its start): then the recorded answer is printed whole.
type output struct {
	opts   *Options
	prices pricing.Table
	// provider and model price the run (the config record's).
	provider, model string
	// terminal is true for the terminal's stream.
	terminal bool
	// turnText is the text streamed of the response in flight; open is
	// true when the stream left the terminal's line unfinished.
	turnText strings.Builder
	open     bool
	// shown is true when the final answer has been streamed to stdout.
	shown bool
	// werr is the first failed write to stdout.
	werr error
}

func newOutput(opts *Options, prices pricing.Table) *output {
	return &output{opts: opts, prices: prices,
		terminal: opts.Env.OutTTY && !opts.JSON && !opts.StreamJSON}
}

// onEvent is the run's agent.Options.OnEvent, or nil when nothing streams.
func (o *output) onEvent() func(agent.Event) {
	switch {
	case o.opts.StreamJSON:
		return o.jsonEvent
	case o.terminal:
		return o.terminalEvent
	case !o.opts.JSON:
		return o.commentary
	}
	return nil
}

// commentary writes to stderr the text of each response that called
// tools, when stdout is not a terminal.
func (o *output) commentary(e agent.Event) {
	if e.Kind != agent.EventMessage || e.Message.Role != transcript.RoleAssistant || !hasCalls(e.Message) {
		return
	}
	if text := strings.TrimSpace(transcript.TextOf(e.Message.Content)); text != "" {
		if o.opts.Env.ErrTTY {
			text = textfmt.Visible(text)
		}
		fmt.Fprintln(o.opts.Env.Err, text)
	}
}

func (o *output) write(s string) {
	if o.werr == nil {
		_, o.werr = io.WriteString(o.opts.Env.Out, s)
	}
}

// terminalEvent streams text to the terminal (see output).
func (o *output) terminalEvent(e agent.Event) {
	switch e.Kind {
	case agent.EventDelta:
		if e.Delta.Kind != "text" || e.Delta.Text == "" {
			return
		}
		o.write(textfmt.Visible(e.Delta.Text))
		o.turnText.WriteString(e.Delta.Text)
		o.open = !strings.HasSuffix(e.Delta.Text, "\n")
	case agent.EventTurn:
		// Tool lines on stderr start on a line of their own.
		if o.open {
			o.write("\n")
			o.open = false
		}
	case agent.EventMessage:
		if e.Message.Role == transcript.RoleAssistant {
			o.endResponse(e.Message)
		}
	}
}

// endResponse files the text just streamed as commentary or as the answer.
func (o *output) endResponse(m *transcript.Message) {
	streamed := o.turnText.String()
	o.turnText.Reset()
	if !hasCalls(m) {
		o.shown = streamed != "" && sameText(streamed, transcript.TextOf(m.Content))
		if streamed != "" && !o.shown {
			fmt.Fprintln(o.opts.Env.Err, "mecha: the answer streamed differs from the one recorded (a retried request?): the recorded answer follows")
		}
		return
	}
	o.shown = false
	// To a file, the text as recorded (a retried request streamed some of
	// it twice).
	if text := strings.TrimSpace(transcript.TextOf(m.Content)); text != "" && !o.opts.Env.ErrTTY {
		fmt.Fprintln(o.opts.Env.Err, text)
	}
}

func hasCalls(m *transcript.Message) bool {
	for _, b := range m.Content {
		if b.Type == transcript.BlockToolUse {
			return true
		}
	}
	return false
}

// sameText reports whether two texts say the same apart from white space
// (text blocks stream back to back but are recorded joined by newlines).
func sameText(a, b string) bool {
	return strings.Join(strings.Fields(a), " ") == strings.Join(strings.Fields(b), " ")
}

// streamEvent is one line of --stream-json; only the fields of its Type
// are set. The schema is in the command's help (and so the manual).
type streamEvent struct {
	Type       string            `json:"type"`
	Kind       string            `json:"kind,omitempty"`
	Text       *string           `json:"text,omitempty"`
	Index      *int              `json:"index,omitempty"`
	Role       string            `json:"role,omitempty"`
	ID         string            `json:"id,omitempty"`
	Name       string            `json:"name,omitempty"`
	Input      json.RawMessage   `json:"input,omitempty"`
	Content    any               `json:"content,omitempty"`
	IsError    *bool             `json:"is_error,omitempty"`
	DurationMS *int64            `json:"duration_ms,omitempty"`
	StopReason string            `json:"stop_reason,omitempty"`
	Usage      *transcript.Usage `json:"usage,omitempty"`
}

// jsonEvent writes one --stream-json line per event.
func (o *output) jsonEvent(e agent.Event) {
	var ev streamEvent
	switch e.Kind {
	case agent.EventDelta:
		ev = streamEvent{Type: "delta", Kind: e.Delta.Kind, Text: &e.Delta.Text}
	case agent.EventMessage:
		ev = streamEvent{Type: "message", Index: &e.Index, Role: e.Message.Role, Content: e.Message.Content}
	case agent.EventToolStart:
		ev = streamEvent{Type: "tool_start", ID: e.Call.ID, Name: e.Call.Name, Input: rawInput(e.Call.Input)}
	case agent.EventToolDone:
		ms := e.Took.Milliseconds()
		ev = streamEvent{Type: "tool_done", ID: e.Call.ID, Name: e.Call.Name, DurationMS: &ms}
		if e.Result != nil {
			ev.Content, ev.IsError = e.Result.Content, &e.Result.IsError
		}
	case agent.EventTurn:
		ev = streamEvent{Type: "turn", StopReason: e.StopReason, Usage: &e.Usage}
	default:
		return
	}
	o.writeJSONLine(ev)
}

// rawInput is a call's input as JSON: {} when there is none, a string
// when what the model sent does not parse.
func rawInput(in json.RawMessage) json.RawMessage {
	if len(in) == 0 {
		return json.RawMessage("{}")
	}
	if !json.Valid(in) {
		b, _ := json.Marshal(string(in))
		return b
	}
	return in
}

func (o *output) writeJSONLine(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		if o.werr == nil {
			o.werr = err
		}
		return
	}
	o.write(string(b) + "\n")
}

// streamResult is the last line of --stream-json.
type streamResult struct {
	Type       string           `json:"type"`
	Session    *string          `json:"session"`
	Text       string           `json:"text"`
	Turns      int              `json:"turns"`
	Usage      transcript.Usage `json:"usage"`
	StopReason string           `json:"stop_reason"`
	CostUSD    *float64         `json:"cost_usd"`
	Error      string           `json:"error,omitempty"`
}

// report prints how the run ended: the --json object, the --stream-json
// result line, or the answer unless the terminal's stream showed it.
func (o *output) report(sessionID *string, res *agent.Result, runErr error) error {
	var costUSD *float64
	if cost, ok := o.prices.Cost(o.provider, o.model, res.Usage); ok {
		costUSD = &cost
	}
	switch {
	case o.opts.StreamJSON:
		r := streamResult{Type: "result", Session: sessionID, Text: res.Text, Turns: res.Turns, Usage: res.Usage, StopReason: res.StopReason, CostUSD: costUSD}
		if runErr != nil {
			r.Error = runErr.Error()
		}
		o.writeJSONLine(r)
	case runErr != nil:
	case o.opts.JSON:
		return cmdkit.WriteJSON(o.opts.Env.Out, runResult{sessionID, res.Text, res.Turns, res.Usage, res.StopReason, costUSD})
	case o.shown:
	case res.Text != "" && o.terminal:
		o.write(textfmt.Visible(res.Text) + "\n")
	case res.Text != "":
		o.write(res.Text + "\n") // not a terminal: the answer's bytes as they are
	}
	return o.werr
}
