package importer

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/record/transcript"
)

// ccBlocks converts a message's blocks.
func (c *Conversation) ccBlocks(in []ccBlock, cwd string) []transcript.Block {
	var out []transcript.Block
	for _, b := range in {
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
			out = append(out, transcript.Block{Type: b.Type, Raw: b.raw})
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
	case "Task", "Agent":
		// A sub-agent, as mecha's agent tool starts one: the prompt is its
		// task; the agent type (and the tools it brings) has no mapping.
		return "agent", mustJSON(map[string]any{"task": str("prompt")}), true
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
