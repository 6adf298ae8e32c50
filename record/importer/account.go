package importer

import (
	"github.com/mecha-agent/mecha/record/transcript"
)

// Units counts what a source's entries held: prompts (user entries of
// text), responses (assistant answers, one per API response), tool calls
// and tool results.
type Units struct {
	Prompts, Responses, Calls, Results int
}

func (u Units) add(o Units) Units {
	return Units{u.Prompts + o.Prompts, u.Responses + o.Responses, u.Calls + o.Calls, u.Results + o.Results}
}

// skip counts the entry at line n as not imported, for reason, with what
// it held.
func (c *Conversation) skip(n int, reason string, u Units) {
	if c.Skipped == nil {
		c.Skipped = map[string]int{}
	}
	c.Skipped[reason]++
	c.lose(reason, u)
	if reason == transcript.SkipNotUnderstood && len(c.SkippedLines) < 20 {
		c.SkippedLines = append(c.SkippedLines, n)
	}
}

// lose counts what was held by something not imported, for reason.
func (c *Conversation) lose(reason string, u Units) {
	if u == (Units{}) {
		return
	}
	if c.Lost == nil {
		c.Lost = map[string]Units{}
	}
	c.Lost[reason] = c.Lost[reason].add(u)
}

// Held counts what the imported conversation holds: prompts (user
// messages of anything but tool results, and the compaction summaries the
// source wrote as user entries), responses (assistant messages), calls
// and results.
func (c *Conversation) Held() Units {
	u := Units{Prompts: c.summaries}
	for _, m := range c.Messages {
		var result bool
		for _, b := range m.Content {
			switch b.Type {
			case transcript.BlockToolUse:
				u.Calls++
			case transcript.BlockToolResult:
				result = true
				u.Results++
			}
		}
		switch {
		case m.Role == transcript.RoleAssistant:
			u.Responses++
		case !result && len(m.Content) > 0:
			u.Prompts++
		}
	}
	return u
}

// SkippedTotal counts the entries not imported.
func (c *Conversation) SkippedTotal() int {
	n := 0
	for _, k := range c.Skipped {
		n += k
	}
	return n
}
