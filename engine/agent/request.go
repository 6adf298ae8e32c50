package agent

import (
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

// request builds a provider request from the recorded configuration: every
// setting that shapes it comes from cfg, so a replay that passes the same
// config sends the same request.
func (r *run) request(msgs []transcript.Message, specs []tool.Spec) *provider.Request {
	c := r.cfg
	req := &provider.Request{
		Model:       c.Model,
		Messages:    normalize(msgs),
		MaxTokens:   c.MaxTokens,
		Temperature: c.Temperature,
		Seed:        c.Seed,
		Thinking:    c.Thinking,
		CachePrompt: c.CachePrompt,
	}
	if r.opts.OnEvent != nil {
		req.OnDelta = func(d provider.Delta) { r.emit(Event{Kind: EventDelta, Delta: d}) }
	}
	if c.SystemPrompt != nil {
		req.System = *c.SystemPrompt
	}
	if c.Effort != nil {
		req.Effort = *c.Effort
	}
	for _, s := range specs {
		req.Tools = append(req.Tools, provider.ToolSpec{Name: s.Name, Description: s.Description, InputSchema: s.InputSchema})
	}
	return req
}

// normalize makes a recorded conversation acceptable to every provider
// without changing what it says: empty messages are dropped and
// consecutive messages of one role are merged, with tool results first in a
// merged user message as the Messages API requires.
func normalize(msgs []transcript.Message) []transcript.Message {
	out := make([]transcript.Message, 0, len(msgs))
	for _, m := range msgs {
		if len(m.Content) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			merged := append(append([]transcript.Block(nil), out[n-1].Content...), m.Content...)
			if m.Role == transcript.RoleUser {
				merged = resultsFirst(merged)
			}
			out[n-1] = transcript.Message{Role: m.Role, Content: merged, At: out[n-1].At}
			continue
		}
		out = append(out, transcript.Message{Role: m.Role, Content: m.Content, At: m.At})
	}
	return out
}

func resultsFirst(blocks []transcript.Block) []transcript.Block {
	out := make([]transcript.Block, 0, len(blocks))
	for _, b := range blocks {
		if b.Type == transcript.BlockToolResult {
			out = append(out, b)
		}
	}
	for _, b := range blocks {
		if b.Type != transcript.BlockToolResult {
			out = append(out, b)
		}
	}
	return out
}
