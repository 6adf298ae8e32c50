package importer

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// ccEntry is one line of a Claude Code transcript, as far as it is used.
type ccEntry struct {
	Type       string  `json:"type"`
	UUID       string  `json:"uuid"`
	ParentUUID *string `json:"parentUuid"`
	// LogicalParentUUID links a compaction boundary (a system entry with
	// no parentUuid) to the conversation before it.
	LogicalParentUUID string    `json:"logicalParentUuid"`
	IsSidechain       bool      `json:"isSidechain"`
	Cwd               string    `json:"cwd"`
	Timestamp         time.Time `json:"timestamp"`
	RequestID         string    `json:"requestId"`
	Message           *struct {
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
	} `json:"message"`
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
}

// ccIgnored are entry types that carry no conversation and are passed
// over without being counted as not understood.
var ccIgnored = map[string]bool{"summary": true, "system": true, "file-history-snapshot": true}

// ParseClaudeCode reads a Claude Code transcript: the branch ending at its
// last conversation entry, responses rejoined, tools mapped.
func ParseClaudeCode(data []byte) *Conversation {
	c := &Conversation{Provider: "anthropic"}
	byID := map[string]*ccEntry{}
	// links holds the parent of every entry with a uuid, the ones that
	// are no message included, so a branch is followed through them.
	links := map[string]string{}
	var last *ccEntry
	lines(data, func(n int, line []byte) {
		c.Lines++
		var e ccEntry
		if err := json.Unmarshal(line, &e); err != nil {
			c.skip(n)
			return
		}
		if e.UUID != "" {
			switch {
			case e.ParentUUID != nil:
				links[e.UUID] = *e.ParentUUID
			case e.LogicalParentUUID != "":
				links[e.UUID] = e.LogicalParentUUID
			}
		}
		if ccIgnored[e.Type] {
			return
		}
		if (e.Type != "user" && e.Type != "assistant") || e.UUID == "" || e.Message == nil {
			c.skip(n)
			return
		}
		byID[e.UUID] = &e
		if !e.IsSidechain {
			last = &e
		}
	})
	if last == nil {
		return c
	}
	// The branch from the last entry to its root, then in order.
	var branch []*ccEntry
	seen := map[string]bool{}
	for id := last.UUID; id != "" && !seen[id]; id = links[id] {
		seen[id] = true
		if e := byID[id]; e != nil {
			branch = append(branch, e)
		}
	}
	for i, j := 0, len(branch)-1; i < j; i, j = i+1, j-1 {
		branch[i], branch[j] = branch[j], branch[i]
	}
	// Each entry of a split response repeats its usage (the later ones
	// with the final counts): the largest of each count, once a response.
	usageOf := map[string]transcript.Usage{}
	var order []string
	var cur *transcript.Message
	curID := ""
	flush := func() {
		if cur != nil && len(cur.Content) > 0 {
			c.Messages = append(c.Messages, *cur)
			if cur.Role == transcript.RoleAssistant {
				c.Turns++
			}
		}
		cur, curID = nil, ""
	}
	for _, e := range branch {
		c.stamp(e.Timestamp)
		if c.Workspace == "" && e.Cwd != "" {
			c.Workspace = e.Cwd
		}
		m := e.Message
		role := m.Role
		if role == "" {
			role = e.Type
		}
		blocks := c.ccBlocks(m.Content, e.Cwd)
		if role == transcript.RoleAssistant {
			if m.Model != "" && m.Model != "<synthetic>" {
				c.Model = m.Model
			}
			key := m.ID
			if key == "" {
				key = e.RequestID
			}
			if cur == nil || cur.Role != role || key == "" || key != curID {
				flush()
				cur = &transcript.Message{Role: role, At: e.Timestamp.UTC()}
				curID = key
			}
			if u := m.Usage; u != nil {
				ukey := key
				if ukey == "" {
					ukey = "entry " + e.UUID
				}
				prev, ok := usageOf[ukey]
				if !ok {
					order = append(order, ukey)
				}
				usageOf[ukey] = transcript.Usage{InputTokens: max(prev.InputTokens, u.InputTokens),
					OutputTokens:     max(prev.OutputTokens, u.OutputTokens),
					CacheReadTokens:  max(prev.CacheReadTokens, u.CacheReadInputTokens),
					CacheWriteTokens: max(prev.CacheWriteTokens, u.CacheCreationInputTokens)}
			}
			cur.Content = append(cur.Content, blocks...)
			continue
		}
		// A user entry of tool results joins the results before it.
		if results(blocks) && cur != nil && cur.Role == role && results(cur.Content) {
			cur.Content = append(cur.Content, blocks...)
			continue
		}
		flush()
		cur = &transcript.Message{Role: role, Content: blocks, At: e.Timestamp.UTC()}
		curID = "user"
	}
	flush()
	for _, k := range order {
		c.HasUsage = true
		c.Usage = c.Usage.Add(usageOf[k])
	}
	return c
}

func results(blocks []transcript.Block) bool {
	if len(blocks) == 0 {
		return false
	}
	for _, b := range blocks {
		if b.Type != transcript.BlockToolResult {
			return false
		}
	}
	return true
}

// ccBlocks converts a message's content (a string or an array of blocks).
func (c *Conversation) ccBlocks(raw json.RawMessage, cwd string) []transcript.Block {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return []transcript.Block{transcript.TextBlock(s)}
	}
	var in []json.RawMessage
	if json.Unmarshal(raw, &in) != nil {
		return nil
	}
	var out []transcript.Block
	for _, r := range in {
		var b ccBlock
		if json.Unmarshal(r, &b) != nil {
			continue
		}
		switch b.Type {
		case "text":
			out = append(out, transcript.TextBlock(b.Text))
		case "thinking":
			out = append(out, transcript.Block{Type: transcript.BlockThinking, Thinking: b.Thinking, Signature: b.Signature})
		case "tool_use":
			name, input, approx := ccTool(b.Name, b.Input, cwd)
			if approx {
				c.Approximate = append(c.Approximate, b.ID)
			}
			c.tool(name)
			out = append(out, toolUse(b.ID, name, input))
		case "tool_result":
			out = append(out, transcript.Block{Type: transcript.BlockToolResult, ToolUseID: b.ToolUseID,
				Content: resultText(b.Content), IsError: b.IsError})
		default:
			out = append(out, transcript.Block{Type: b.Type, Raw: append(json.RawMessage(nil), r...)})
		}
	}
	return out
}

// resultText is a tool result's content: a string, or blocks whose text
// is joined (any other block shown as [TYPE]).
func resultText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []ccBlock
	if json.Unmarshal(raw, &blocks) != nil {
		return string(raw)
	}
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		if b.Type == "text" {
			parts[i] = b.Text
		} else {
			parts[i] = "[" + b.Type + "]"
		}
	}
	return strings.Join(parts, "\n")
}

// ccTool maps a Claude Code tool call onto mecha's tools: the name, the
// input, and whether the mapping only approximates what ran.
func ccTool(name string, raw json.RawMessage, cwd string) (string, json.RawMessage, bool) {
	var in map[string]any
	if json.Unmarshal(raw, &in) != nil {
		return name, raw, false
	}
	str := func(k string) string { s, _ := in[k].(string); return s }
	num := func(k string) (float64, bool) { f, ok := in[k].(float64); return f, ok }
	switch name {
	case "Read":
		out := map[string]any{"path": str("file_path")}
		if f, ok := num("offset"); ok && f >= 1 {
			out["offset"] = int(f)
		}
		if f, ok := num("limit"); ok && f >= 1 {
			out["limit"] = int(f)
		}
		return "fs_read", mustJSON(out), false
	case "Write":
		return "fs_write", mustJSON(map[string]any{"path": str("file_path"), "content": str("content")}), false
	case "Edit":
		out := map[string]any{"path": str("file_path"), "old_string": str("old_string"), "new_string": str("new_string")}
		if b, _ := in["replace_all"].(bool); b {
			out["replace_all"] = true
		}
		return "fs_edit", mustJSON(out), false
	case "Bash":
		out := map[string]any{"command": str("command")}
		if ms, ok := num("timeout"); ok && ms > 0 {
			out["timeout_seconds"] = int((ms + 999) / 1000)
		}
		return "shell", mustJSON(out), false
	case "Glob":
		dir := str("path")
		if dir == "" {
			dir = "."
		}
		cmd := fmt.Sprintf("find %s -path %s -type f", shQuote(dir), shQuote(globPath(dir, str("pattern"))))
		return "shell", mustJSON(map[string]any{"command": cmd}), true
	case "Grep":
		dir := str("path")
		if dir == "" {
			dir = "."
		}
		flags := "-rnE"
		if b, _ := in["-i"].(bool); b {
			flags += "i"
		}
		if str("output_mode") == "files_with_matches" || str("output_mode") == "" {
			flags = strings.Replace(flags, "n", "l", 1)
		}
		cmd := "grep " + flags
		if g := str("glob"); g != "" {
			cmd += " --include=" + shQuote(g)
		}
		cmd += " -- " + shQuote(str("pattern")) + " " + shQuote(dir)
		return "shell", mustJSON(map[string]any{"command": cmd}), true
	}
	return name, raw, false
}

// globPath is a Glob pattern as find's -path sees it under dir.
func globPath(dir, pattern string) string {
	if strings.HasPrefix(pattern, "/") {
		return pattern
	}
	p := strings.ReplaceAll(pattern, "**/", "")
	return strings.TrimSuffix(dir, "/") + "/*" + strings.TrimPrefix(p, "*")
}

// shQuote quotes a word for sh.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
