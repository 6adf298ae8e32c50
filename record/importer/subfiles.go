package importer

import (
	"bufio"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mecha-agent/mecha/internal/safeopen"
)

// subagentFiles finds the files of the sub-agents a Claude Code
// conversation (from abs) started, parses them and joins each to the call
// that started it, in the conversation or in a child already joined (a
// sub-agent that started one). Claude Code 2.1 writes them to
// <session>/subagents/agent-<id>.jsonl beside the file; earlier versions
// to agent-<id>.jsonl in the same directory, naming the session in their
// entries. It returns the files that joined no call.
func subagentFiles(abs string, conv *Conversation) []string {
	dir := filepath.Dir(abs)
	paths, _ := filepath.Glob(filepath.Join(dir, strings.TrimSuffix(filepath.Base(abs), ".jsonl"), "subagents", "agent-*.jsonl"))
	if conv.SessionID != "" {
		flat, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
		for _, p := range flat {
			if p != abs && sessionOf(p) == conv.SessionID {
				paths = append(paths, p)
			}
		}
	}
	sort.Strings(paths)
	var subs []*Conversation
	for _, p := range paths {
		data, err := safeopen.ReadFile(p, MaxSource)
		if err != nil {
			continue
		}
		sub := ParseClaudeCode(data)
		sub.named(ClaudeCode)
		sub.from(p)
		sub.data = data
		if sub.AgentID == "" {
			sub.AgentID = strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "agent-"), ".jsonl")
		}
		subs = append(subs, sub)
	}
	// Join in rounds, so a sub-agent started by a sub-agent joins once
	// its parent has.
	for joined := true; joined && len(subs) > 0; {
		joined = false
		var rest []*Conversation
		for _, sub := range subs {
			if family := conv.tree(); !adoptAny(family, sub) {
				rest = append(rest, sub)
			} else {
				joined = true
			}
		}
		subs = rest
	}
	var unjoined []string
	for _, sub := range subs {
		unjoined = append(unjoined, sub.source)
	}
	return unjoined
}

// tree is a conversation and its children, theirs, and so on.
func (c *Conversation) tree() []*Conversation {
	out := []*Conversation{c}
	for _, k := range c.Children {
		out = append(out, k.tree()...)
	}
	return out
}

func adoptAny(family []*Conversation, sub *Conversation) bool {
	for _, c := range family {
		if c.adopt(sub) {
			return true
		}
	}
	return false
}

// sessionOf is the sessionId the first lines of a file name ("" when
// none of its first five does).
func sessionOf(path string) string {
	f, err := safeopen.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for i := 0; i < 5 && sc.Scan(); i++ {
		var e struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.SessionID != "" {
			return e.SessionID
		}
	}
	return ""
}
