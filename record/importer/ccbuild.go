package importer

import (
	"strings"

	"github.com/mecha-agent/mecha/record/transcript"
)

// ccBuild turns the entries of the conversation into messages, in the
// order they were written.
type ccBuild struct {
	p *ccParse
	c *Conversation
	// asst is the response being put together (from every entry of its
	// API response, even when a tool result was written between two of
	// them) and res the results that answer it.
	asst, res *transcript.Message
	asstKey   string
	// calls and answered are the tool_use ids and the result ids imported;
	// responses the keys of the responses imported.
	calls, answered, responses map[string]bool
	// usage is each response's usage (the entries of a split response
	// repeat it, the later ones with the final counts), in order.
	usage map[string]transcript.Usage
	order []string
	// lostResponse are the responses held only by skipped entries, with
	// the reason of the first.
	lostResponse map[string]string
	// pending is the compaction a boundary started, awaiting its summary.
	pending *Compaction
}

func (p *ccParse) build() {
	b := &ccBuild{p: p, c: p.c, calls: map[string]bool{}, answered: map[string]bool{}, responses: map[string]bool{},
		usage: map[string]transcript.Usage{}, lostResponse: map[string]string{}}
	for _, n := range p.nodes {
		b.entry(n)
	}
	b.flush()
	for _, k := range b.order {
		b.c.HasUsage = true
		b.c.Usage = b.c.Usage.Add(b.usage[k])
	}
	for agent, call := range p.progress {
		b.c.answered(call, agent)
	}
	for k, reason := range b.lostResponse {
		if !b.responses[k] {
			b.c.lose(reason, Units{Responses: 1})
		}
	}
}

// skip counts an entry not imported, for reason.
func (b *ccBuild) skip(n *ccNode, reason string) {
	b.c.skip(n.line, reason, n.held())
	if n.kind == ccResponse {
		if _, ok := b.lostResponse[n.key()]; !ok {
			b.lostResponse[n.key()] = reason
		}
	}
}

func (b *ccBuild) entry(n *ccNode) {
	c := b.c
	switch {
	case n.e.IsSidechain && !b.p.sub:
		return // a sub-agent's: see sidechains
	case !b.p.onPath[n.e.UUID] && !b.p.attached(n.e.UUID):
		b.skip(n, transcript.SkipOffBranch)
		return
	}
	switch n.kind {
	case ccMeta:
		b.skip(n, transcript.SkipInjected)
		return
	case ccCommand:
		b.skip(n, transcript.SkipCommand)
		return
	}
	c.stamp(n.at)
	if c.Workspace == "" && n.e.Cwd != "" {
		c.Workspace = n.e.Cwd
	}
	switch n.kind {
	case ccBoundary:
		b.flush()
		b.pending = &Compaction{Before: len(c.Messages), At: n.at}
		c.Compactions = append(c.Compactions, *b.pending)
	case ccSummary:
		b.flush()
		if b.pending == nil || len(c.Messages) != b.pending.Before {
			c.Compactions = append(c.Compactions, Compaction{Before: len(c.Messages), At: n.at})
		}
		c.Compactions[len(c.Compactions)-1].Summary = textOf(n.blocks)
		c.summaries++
		b.pending = nil
	case ccPrompt, ccQueued:
		blocks := c.ccBlocks(n.blocks, n.e.Cwd)
		if len(blocks) == 0 {
			b.skip(n, transcript.SkipNotUnderstood)
			return
		}
		b.flush()
		c.Messages = append(c.Messages, transcript.Message{Role: transcript.RoleUser, Content: blocks, At: n.at.UTC()})
	case ccResults:
		b.results(n)
	case ccResponse:
		b.response(n)
	}
}

// response adds an assistant entry to the response it is a part of.
func (b *ccBuild) response(n *ccNode) {
	c, m := b.c, n.e.Message
	key := n.key()
	if b.asst == nil || key != b.asstKey {
		b.flush()
		b.asst, b.asstKey = &transcript.Message{Role: transcript.RoleAssistant, At: n.at.UTC()}, key
	}
	var fresh []ccBlock
	for _, bl := range n.blocks {
		if bl.Type == "tool_use" && b.calls[bl.ID] {
			c.lose(transcript.SkipDuplicate, Units{Calls: 1})
			continue
		}
		if bl.Type == "tool_use" {
			b.calls[bl.ID] = true
		}
		fresh = append(fresh, bl)
	}
	if len(fresh) == 0 && len(n.blocks) > 0 {
		c.skip(n.line, transcript.SkipDuplicate, Units{})
		return
	}
	if m.Model != "" && m.Model != "<synthetic>" {
		c.Model = m.Model
	}
	b.responses[key] = true
	b.asst.Content = append(b.asst.Content, c.ccBlocks(fresh, n.e.Cwd)...)
	for _, bl := range fresh {
		if bl.Type == "tool_use" && ccStartsAgent(bl.Name) {
			c.task(bl.ID, bl.Input)
		}
	}
	if u := m.Usage; u != nil {
		prev, ok := b.usage[key]
		if !ok {
			b.order = append(b.order, key)
		}
		b.usage[key] = transcript.Usage{InputTokens: max(prev.InputTokens, u.InputTokens),
			OutputTokens:     max(prev.OutputTokens, u.OutputTokens),
			CacheReadTokens:  max(prev.CacheReadTokens, u.CacheReadInputTokens),
			CacheWriteTokens: max(prev.CacheWriteTokens, u.CacheCreationInputTokens)}
	}
}

// results adds a user entry of tool results to the results answering the
// response before it.
func (b *ccBuild) results(n *ccNode) {
	c := b.c
	var fresh []ccBlock
	for _, bl := range n.blocks {
		if bl.Type == "tool_result" && b.answered[bl.ToolUseID] {
			c.lose(transcript.SkipDuplicate, Units{Results: 1})
			continue
		}
		if bl.Type == "tool_result" {
			b.answered[bl.ToolUseID] = true
		}
		fresh = append(fresh, bl)
	}
	if len(fresh) == 0 {
		c.skip(n.line, transcript.SkipDuplicate, Units{})
		return
	}
	blocks := c.ccBlocks(fresh, n.e.Cwd)
	for _, bl := range fresh {
		if bl.Type == "tool_result" {
			c.answered(bl.ToolUseID, agentOf(n, bl))
		}
	}
	if b.res == nil {
		b.res = &transcript.Message{Role: transcript.RoleUser, At: n.at.UTC()}
	}
	b.res.Content = append(b.res.Content, blocks...)
}

// flush ends the response being put together: it, then its results in
// the order of its calls (Claude Code writes them as they finish).
func (b *ccBuild) flush() {
	c := b.c
	if b.asst != nil && len(b.asst.Content) > 0 {
		c.Messages = append(c.Messages, *b.asst)
		c.Turns++
		if b.res != nil {
			order := map[string]int{}
			for i, bl := range b.asst.Content {
				if bl.Type == transcript.BlockToolUse {
					order[bl.ID] = i + 1
				}
			}
			sortResults(b.res.Content, order)
		}
	}
	if b.res != nil && len(b.res.Content) > 0 {
		c.Messages = append(c.Messages, *b.res)
	}
	b.asst, b.res, b.asstKey = nil, nil, ""
}

// sortResults orders tool results as their calls were made (a stable
// sort: results of calls not in order, and other blocks, keep their
// place after them).
func sortResults(blocks []transcript.Block, order map[string]int) {
	rank := func(bl transcript.Block) int {
		if r := order[bl.ToolUseID]; bl.Type == transcript.BlockToolResult && r > 0 {
			return r
		}
		return len(order) + 1
	}
	for i := 1; i < len(blocks); i++ {
		for j := i; j > 0 && rank(blocks[j]) < rank(blocks[j-1]); j-- {
			blocks[j], blocks[j-1] = blocks[j-1], blocks[j]
		}
	}
}

// textOf is the text of Claude Code blocks, joined.
func textOf(blocks []ccBlock) string {
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && b.Text != "" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
