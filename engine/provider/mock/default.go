package mock

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

// listTool is the tool the default behaviour calls.
const listTool = "fs_list"

// maxListed bounds the entries named in the default summary.
const maxListed = 20

// defaultTurn is what the mock answers without a script:
//
//   - no tool result in the conversation yet and fs_list offered: call
//     fs_list with {"path":"."};
//   - the last user message carries fs_list's result: summarise it and end
//     the turn;
//   - the last user message carries other tool results: say how many;
//   - otherwise: answer the prompt with a fixed sentence that quotes it.
func defaultTurn(req *provider.Request) Turn {
	var last *transcript.Message
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == transcript.RoleUser {
			last = &req.Messages[i]
			break
		}
	}
	if !hasToolResult(req.Messages) {
		if offers(req.Tools, listTool) {
			return Turn{
				Text:      "Let me look at the workspace.",
				ToolCalls: []ToolCall{{Name: listTool, Input: json.RawMessage(`{"path":"."}`)}},
			}
		}
		return Turn{Text: "This is the mock model, which calls no tools here. You said: " + quote(lastText(last))}
	}
	if last == nil {
		return Turn{Text: "There is nothing to answer."}
	}
	names := toolNames(req.Messages)
	results := 0
	for _, b := range last.Content {
		if b.Type != transcript.BlockToolResult {
			continue
		}
		results++
		if names[b.ToolUseID] == listTool {
			return Turn{Text: summarise(b)}
		}
	}
	if results > 0 {
		return Turn{Text: fmt.Sprintf("Done: the tools returned %d result(s).", results)}
	}
	return Turn{Text: "This is the mock model. You said: " + quote(lastText(last))}
}

func offers(tools []provider.ToolSpec, name string) bool {
	for _, t := range tools {
		if t.Name == name {
			return true
		}
	}
	return false
}

func hasToolResult(msgs []transcript.Message) bool {
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == transcript.BlockToolResult {
				return true
			}
		}
	}
	return false
}

// toolNames maps every tool call id of the conversation to its tool.
func toolNames(msgs []transcript.Message) map[string]string {
	names := map[string]string{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == transcript.BlockToolUse {
				names[b.ID] = b.Name
			}
		}
	}
	return names
}

func lastText(m *transcript.Message) string {
	if m == nil {
		return ""
	}
	var parts []string
	for _, b := range m.Content {
		if b.Type == transcript.BlockText {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, " ")
}

// quote returns the first line of s, cut to 80 characters, in quotes.
func quote(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80]) + "..."
	}
	return fmt.Sprintf("%q.", s)
}

// summarise describes a listing: one entry per non-empty line, or the
// names of a JSON array of strings or of objects with a "name".
func summarise(b transcript.Block) string {
	if b.IsError {
		return "I could not list the workspace: " + strings.TrimSuffix(quote(b.Content), ".")
	}
	entries := listing(b.Content)
	switch len(entries) {
	case 0:
		return "The workspace is empty."
	case 1:
		return fmt.Sprintf("The workspace holds 1 entry: %s.", entries[0])
	}
	shown := entries[:min(len(entries), maxListed)]
	s := fmt.Sprintf("The workspace holds %d entries: %s", len(entries), strings.Join(shown, ", "))
	if more := len(entries) - len(shown); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s + "."
}

func listing(content string) []string {
	var entries []string
	var arr []json.RawMessage
	if json.Unmarshal([]byte(content), &arr) == nil {
		for _, raw := range arr {
			var s string
			var obj struct {
				Name string `json:"name"`
			}
			switch {
			case json.Unmarshal(raw, &s) == nil && s != "":
				entries = append(entries, s)
			case json.Unmarshal(raw, &obj) == nil && obj.Name != "":
				entries = append(entries, obj.Name)
			}
		}
		return entries
	}
	for _, line := range strings.Split(content, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			entries = append(entries, line)
		}
	}
	return entries
}
