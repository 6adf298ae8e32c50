package importer

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// ccEntry is one line of a Claude Code transcript, as far as it is used.
type ccEntry struct {
	Type       string  `json:"type"`
	Subtype    string  `json:"subtype"`
	UUID       string  `json:"uuid"`
	ParentUUID *string `json:"parentUuid"`
	// LogicalParentUUID links a compaction boundary (a system entry with
	// no parentUuid) to the conversation before it.
	LogicalParentUUID string `json:"logicalParentUuid"`
	IsSidechain       bool   `json:"isSidechain"`
	// IsMeta marks a user entry Claude Code wrote itself (a caveat, a
	// skill's or a command's body, a reminder).
	IsMeta bool `json:"isMeta"`
	// IsCompactSummary marks the user entry holding a compaction's summary.
	IsCompactSummary bool `json:"isCompactSummary"`
	// SessionID is Claude Code's session; AgentID names the sub-agent an
	// entry is of (on a sidechain entry) or whose answer it carries (on
	// the result of the call that started it).
	SessionID string `json:"sessionId"`
	AgentID   string `json:"agentId"`
	// ToolUseResult is what Claude Code kept of a result (a Task's holds
	// its agentId); ParentToolUseID and Data, on a progress line, the call
	// it reports on and, for a sub-agent's progress, its agentId.
	ToolUseResult   json.RawMessage `json:"toolUseResult"`
	ParentToolUseID string          `json:"parentToolUseID"`
	Data            *struct {
		Type    string `json:"type"`
		AgentID string `json:"agentId"`
	} `json:"data"`
	Cwd        string        `json:"cwd"`
	Timestamp  string        `json:"timestamp"`
	RequestID  string        `json:"requestId"`
	Message    *ccMessage    `json:"message"`
	Attachment *ccAttachment `json:"attachment"`
}

type ccMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Model   string          `json:"model"`
	Content json.RawMessage `json:"content"`
	Usage   *struct {
		InputTokens              uint64 `json:"input_tokens"`
		OutputTokens             uint64 `json:"output_tokens"`
		CacheCreationInputTokens uint64 `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     uint64 `json:"cache_read_input_tokens"`
	} `json:"usage"`
}

// ccAttachment is an attachment entry; only a queued command (a prompt
// typed while the model worked) is conversation.
type ccAttachment struct {
	Type   string          `json:"type"`
	Prompt json.RawMessage `json:"prompt"`
}

// ccBlock is one content block of a Claude Code message.
type ccBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	// raw is the block as written, kept for a type not known.
	raw json.RawMessage
}

// ccBookkeeping are entry types that carry no conversation.
var ccBookkeeping = map[string]bool{"summary": true, "file-history-snapshot": true, "progress": true,
	"queue-operation": true, "custom-title": true, "ai-title": true, "last-prompt": true, "agent-name": true,
	"pr-link": true, "mode": true, "cost-state": true, "tag": true, "agent-setting": true, "turn_end": true,
	"permission-mode": true, "attachment": true, "system": true}

// Kinds of conversation entry.
const (
	ccPrompt   = iota // user text typed by the person
	ccResults         // a user entry of tool results
	ccResponse        // an assistant entry: a part of one API response
	ccMeta            // a user entry Claude Code wrote (isMeta)
	ccCommand         // a slash-command wrapper or a local command's output
	ccSummary         // a compaction's summary
	ccBoundary        // a compaction boundary
	ccQueued          // a prompt queued while the model worked
)

// ccNode is a conversation entry of the file.
type ccNode struct {
	e      ccEntry
	raw    []byte
	line   int
	kind   int
	blocks []ccBlock // the message's content as blocks (a string is one text)
	at     time.Time
}

// key is the API response an assistant entry is a part of.
func (n *ccNode) key() string {
	if m := n.e.Message; m != nil && m.ID != "" {
		return m.ID
	}
	if n.e.RequestID != "" {
		return n.e.RequestID
	}
	return "entry " + n.e.UUID
}

// held is what the entry holds, for the count of what was not imported
// (its response is counted apart, once per response).
func (n *ccNode) held() Units {
	var u Units
	switch n.kind {
	case ccPrompt, ccMeta, ccCommand, ccSummary, ccQueued:
		u.Prompts = 1
	}
	for _, b := range n.blocks {
		switch b.Type {
		case "tool_use":
			u.Calls++
		case "tool_result":
			u.Results++
		}
	}
	return u
}

// ccParse is one Claude Code file being read.
type ccParse struct {
	c *Conversation
	// sub is set when the file is a sub-agent's (every conversation
	// entry is a sidechain's): its sidechain entries are its conversation.
	sub   bool
	nodes []*ccNode
	// links holds the parent of every entry with a uuid (the logical
	// parent of a compaction boundary), nodes or not, so a branch is
	// followed through progress lines; line the line of each.
	links map[string]string
	line  map[string]int
	node  map[string]*ccNode
	// onPath is the branch the conversation last took; live the memo of
	// which other entries hang off it without a rewind between.
	onPath map[string]bool
	live   map[string]bool
	// progress are the calls sub-agents' progress lines report on, by
	// agent id.
	progress map[string]string
}

// ParseClaudeCode reads a Claude Code transcript: the branch the
// conversation last took, with what hangs off it (the results of
// parallel calls, the rest of a response split around a result); each
// response rejoined, compactions kept, tools mapped.
//
// Sidechain entries are sub-agents' conversations: each is parsed on its
// own and, joined to the Task (or Agent) call that started it, becomes one
// of the conversation's Children; a file whose every conversation entry is
// a sidechain's is a sub-agent's own (subagents/agent-*.jsonl), whose
// conversation they are.
func ParseClaudeCode(data []byte) *Conversation {
	p := &ccParse{c: &Conversation{Provider: "anthropic", data: data}, links: map[string]string{}, line: map[string]int{},
		node: map[string]*ccNode{}, onPath: map[string]bool{}, live: map[string]bool{}, progress: map[string]string{}}
	lines(data, p.read)
	p.sub = true
	for _, n := range p.nodes {
		p.sub = p.sub && n.e.IsSidechain
	}
	p.branch()
	p.build()
	if !p.sub {
		p.sidechains()
	}
	return p.c
}

// read takes in one line.
func (p *ccParse) read(n int, line []byte) {
	c := p.c
	c.Entries++
	var e ccEntry
	if err := json.Unmarshal(line, &e); err != nil {
		c.skip(n, transcript.SkipNotUnderstood, Units{})
		return
	}
	if e.UUID != "" {
		switch {
		case e.ParentUUID != nil:
			p.links[e.UUID] = *e.ParentUUID
		case e.LogicalParentUUID != "":
			p.links[e.UUID] = e.LogicalParentUUID
		}
		p.line[e.UUID] = n
	}
	if p.c.SessionID == "" {
		p.c.SessionID = e.SessionID
	}
	if e.AgentID != "" && e.IsSidechain && p.c.AgentID == "" {
		p.c.AgentID = e.AgentID
	}
	if d := e.Data; e.Type == "progress" && d != nil && d.Type == "agent_progress" && d.AgentID != "" && e.ParentToolUseID != "" {
		p.progress[d.AgentID] = e.ParentToolUseID
	}
	nd := &ccNode{e: e, line: n, raw: line}
	nd.at, _ = time.Parse(time.RFC3339Nano, e.Timestamp)
	switch {
	case e.Type == "user" || e.Type == "assistant":
		if e.Message == nil || e.UUID == "" {
			c.skip(n, transcript.SkipNotUnderstood, Units{})
			return
		}
		nd.blocks = ccContent(e.Message.Content)
		nd.kind = ccKind(&e, nd.blocks)
	case e.Type == "system" && e.Subtype == "compact_boundary":
		nd.kind = ccBoundary
	case e.Type == "attachment" && e.Attachment != nil && e.Attachment.Type == "queued_command":
		nd.kind, nd.blocks = ccQueued, ccContent(e.Attachment.Prompt)
	case ccBookkeeping[e.Type]:
		c.skip(n, transcript.SkipBookkeeping, Units{})
		return
	default:
		c.skip(n, transcript.SkipNotUnderstood, Units{})
		return
	}
	p.nodes = append(p.nodes, nd)
	if e.UUID != "" {
		p.node[e.UUID] = nd
	}
}

// ccContent reads a message's content: a string (one text block) or
// blocks (a block that is not an object is left out).
func ccContent(raw json.RawMessage) []ccBlock {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []ccBlock{{Type: "text", Text: s}}
	}
	var in []json.RawMessage
	json.Unmarshal(raw, &in)
	out := make([]ccBlock, 0, len(in))
	for _, r := range in {
		var b ccBlock
		if json.Unmarshal(r, &b) == nil {
			b.raw = append(json.RawMessage(nil), r...)
			out = append(out, b)
		}
	}
	return out
}

// ccKind says what a user or assistant entry is.
func ccKind(e *ccEntry, blocks []ccBlock) int {
	if e.Type == "assistant" || e.Message.Role == "assistant" {
		return ccResponse
	}
	for _, b := range blocks {
		if b.Type == "tool_result" {
			return ccResults
		}
	}
	text := ""
	for _, b := range blocks {
		if b.Type == "text" {
			text = strings.TrimSpace(b.Text)
			break
		}
	}
	switch {
	case e.IsCompactSummary || strings.HasPrefix(text, "This session is being continued from a previous conversation"):
		return ccSummary
	case e.IsMeta:
		return ccMeta
	}
	for _, tag := range []string{"<command-name>", "<command-message>", "<local-command-stdout>", "<local-command-stderr>", "<local-command-caveat>"} {
		if strings.HasPrefix(text, tag) {
			return ccCommand
		}
	}
	return ccPrompt
}

// typed says whether an entry was put in by the person: a rewind starts a
// branch at one.
func (n *ccNode) typed() bool {
	switch n.kind {
	case ccPrompt, ccCommand, ccSummary, ccQueued:
		return true
	}
	return false
}

// branch finds the branch the conversation last took: from its last
// entry (not a lagging tool result) to its root. A compaction boundary
// whose logical parent is not in the file (the conversation before it was
// rewritten) does not end it: the branch goes on from the last entry
// before the boundary.
func (p *ccParse) branch() {
	leaf := p.lastBefore(len(p.nodes))
	for leaf >= 0 {
		root := ""
		for id := p.nodes[leaf].e.UUID; id != "" && !p.onPath[id]; id = p.links[id] {
			if _, ok := p.line[id]; !ok {
				break
			}
			p.onPath[id] = true
			root = id
		}
		r := p.node[root]
		if r == nil || r.kind != ccBoundary {
			return
		}
		i := 0
		for i < len(p.nodes) && p.nodes[i] != r {
			i++
		}
		leaf = p.lastBefore(i)
	}
}

// lastBefore is the index of the last node before i that can end a
// branch (not a sub-agent's, not a tool result, not already on the
// branch); -1 when none.
func (p *ccParse) lastBefore(i int) int {
	for i--; i >= 0; i-- {
		n := p.nodes[i]
		if (p.sub || !n.e.IsSidechain) && n.kind != ccResults && n.e.UUID != "" && !p.onPath[n.e.UUID] {
			return i
		}
	}
	return -1
}

// attached says whether an entry off the branch hangs off it with nothing
// the person typed between (the result of a parallel call, the rest of a
// response): those are part of the conversation; a branch that starts at
// a prompt was left by a rewind.
func (p *ccParse) attached(id string) bool {
	var walk []string
	seen := map[string]bool{}
	ok := false
	for {
		if p.onPath[id] {
			ok = true
			break
		}
		if v, memo := p.live[id]; memo {
			ok = v
			break
		}
		if _, in := p.line[id]; !in || seen[id] {
			break // linked to nothing in the file, or a cycle
		}
		seen[id] = true
		walk = append(walk, id)
		id = p.links[id]
	}
	for i := len(walk) - 1; i >= 0; i-- {
		if n := p.node[walk[i]]; n != nil && n.typed() {
			ok = false
		}
		p.live[walk[i]] = ok
	}
	return ok
}
