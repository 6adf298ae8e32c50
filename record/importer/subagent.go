package importer

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"github.com/mecha-agent/mecha/record/transcript"
)

// family is what joins sub-agents' conversations to the calls that
// started them.
type family struct {
	// tasks are the prompts of the calls that start a sub-agent, by call
	// id, in the order of the calls; agents the calls by the agent ids
	// their results (or progress lines) name.
	tasks     map[string]string
	taskOrder []string
	agents    map[string]string
	// adopted are the calls a child was joined to.
	adopted map[string]bool
}

// ccStartsAgent says whether a Claude Code tool starts a sub-agent.
func ccStartsAgent(name string) bool { return name == "Task" || name == "Agent" }

// task notes a call that starts a sub-agent, with its prompt.
func (c *Conversation) task(id string, input json.RawMessage) {
	var in struct {
		Prompt string `json:"prompt"`
	}
	json.Unmarshal(input, &in)
	if c.fam.tasks == nil {
		c.fam.tasks, c.fam.agents, c.fam.adopted = map[string]string{}, map[string]string{}, map[string]bool{}
	}
	if _, ok := c.fam.tasks[id]; !ok {
		c.fam.taskOrder = append(c.fam.taskOrder, id)
	}
	c.fam.tasks[id] = strings.TrimSpace(in.Prompt)
}

// answered notes the agent whose answer a call's result carries.
func (c *Conversation) answered(call, agent string) {
	if _, ok := c.fam.tasks[call]; !ok || agent == "" {
		return
	}
	if _, ok := c.fam.agents[agent]; !ok {
		c.fam.agents[agent] = call
	}
}

// agentIDText is how a Task's result names its agent in its text (2.1).
var agentIDText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`agentId: ([A-Za-z0-9_-]+)`) })

// agentOf is the agent a result entry names: in toolUseResult (2.1), on
// the entry (2.0), or in the result's text.
func agentOf(n *ccNode, bl ccBlock) string {
	var tur struct {
		AgentID string `json:"agentId"`
	}
	if json.Unmarshal(n.e.ToolUseResult, &tur) == nil && tur.AgentID != "" {
		return tur.AgentID
	}
	if n.e.AgentID != "" && !n.e.IsSidechain {
		return n.e.AgentID
	}
	if m := agentIDText().FindStringSubmatch(resultText(bl.Content)); m != nil {
		return m[1]
	}
	return ""
}

// adopt joins a sub-agent's conversation to the call of c that started
// it: the call its agent id was named by, or else the first call whose
// prompt is the sub-agent's first prompt. It reports whether it did.
func (c *Conversation) adopt(sub *Conversation) bool {
	call := ""
	if sub.AgentID != "" {
		call = c.fam.agents[sub.AgentID]
	}
	if call == "" {
		first := sub.firstPrompt()
		for _, id := range c.fam.taskOrder {
			if first != "" && c.fam.tasks[id] == first && !c.fam.adopted[id] {
				call = id
				break
			}
		}
	}
	if call == "" || c.fam.adopted[call] {
		return false
	}
	c.fam.adopted[call] = true
	sub.CallID = call
	c.Children = append(c.Children, sub)
	return true
}

// firstPrompt is the text of the first user message.
func (c *Conversation) firstPrompt() string {
	for _, m := range c.Messages {
		if m.Role == transcript.RoleUser && !results(m.Content) {
			return strings.TrimSpace(transcript.TextOf(m.Content))
		}
	}
	return ""
}

// sidechains parses each sub-agent's entries in the file (by agent id, or
// else by the root they hang from) on their own, and joins each to the
// call that started it; the entries of one that joins none are counted
// as skipped. The file's count takes in its children's, so it accounts for
// every line of the file.
func (p *ccParse) sidechains() {
	c := p.c
	groups := map[string][]*ccNode{}
	var order []string
	for _, n := range p.nodes {
		if !n.e.IsSidechain {
			continue
		}
		k := n.e.AgentID
		if k == "" {
			k = "root " + p.root(n.e.UUID)
		}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n)
	}
	for _, k := range order {
		var data bytes.Buffer
		for _, n := range groups[k] {
			data.Write(n.raw)
			data.WriteByte('\n')
		}
		sub := ParseClaudeCode(data.Bytes())
		sub.inFile = true
		if c.adopt(sub) {
			for r, n := range sub.Skipped {
				if c.Skipped == nil {
					c.Skipped = map[string]int{}
				}
				c.Skipped[r] += n
			}
			for r, u := range sub.Lost {
				c.lose(r, u)
			}
			continue
		}
		seen := map[string]bool{}
		for _, n := range groups[k] {
			u := n.held()
			if n.kind == ccResponse && !seen[n.key()] {
				seen[n.key()] = true
				u.Responses = 1
			}
			c.skip(n.line, transcript.SkipSidechain, u)
		}
	}
}

// root is the first sidechain entry a chain of sidechain entries goes up
// to.
func (p *ccParse) root(id string) string {
	seen := map[string]bool{}
	for !seen[id] {
		seen[id] = true
		up := p.node[p.links[id]]
		if up == nil || !up.e.IsSidechain {
			return id
		}
		id = up.e.UUID
	}
	return id
}
