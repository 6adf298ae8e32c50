package importer

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// cxLine is one line of a Codex rollout.
type cxLine struct {
	Timestamp time.Time       `json:"timestamp"`
	Type      string          `json:"type"`
	Payload   json.RawMessage `json:"payload"`
}

// cxItem is a response_item payload (and, for its type field, any).
type cxItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	// session_meta and turn_context
	Cwd   string `json:"cwd"`
	Model string `json:"model"`
	// event_msg token_count
	Info *struct {
		Total *struct {
			InputTokens       uint64 `json:"input_tokens"`
			CachedInputTokens uint64 `json:"cached_input_tokens"`
			OutputTokens      uint64 `json:"output_tokens"`
		} `json:"total_token_usage"`
	} `json:"info"`
	// compacted
	Message string `json:"message"`
}

// ParseCodex reads a Codex rollout.
func ParseCodex(data []byte) *Conversation {
	c := &Conversation{Provider: "openai"}
	var cur *transcript.Message
	flush := func() {
		if cur != nil && len(cur.Content) > 0 {
			c.Messages = append(c.Messages, *cur)
			if cur.Role == transcript.RoleAssistant {
				c.Turns++
			}
		}
		cur = nil
	}
	add := func(role string, at time.Time, b transcript.Block) {
		// Outputs gather in one user message, model items in one
		// assistant message; a person's message stands alone.
		joins := cur != nil && cur.Role == role &&
			(role == transcript.RoleAssistant || (b.Type == transcript.BlockToolResult && results(cur.Content)))
		if !joins {
			flush()
			cur = &transcript.Message{Role: role, At: at.UTC()}
		}
		cur.Content = append(cur.Content, b)
	}
	lines(data, func(n int, raw []byte) {
		c.Lines++
		var l cxLine
		var it cxItem
		if json.Unmarshal(raw, &l) != nil || json.Unmarshal(l.Payload, &it) != nil {
			c.skip(n)
			return
		}
		c.stamp(l.Timestamp)
		switch l.Type {
		case "session_meta":
			if it.Cwd != "" {
				c.Workspace = it.Cwd
			}
		case "turn_context":
			if it.Model != "" {
				c.Model = it.Model
			}
			if c.Workspace == "" {
				c.Workspace = it.Cwd
			}
		case "event_msg":
			if it.Type == "token_count" && it.Info != nil && it.Info.Total != nil {
				t := it.Info.Total
				cached := min(t.CachedInputTokens, t.InputTokens)
				c.Usage = transcript.Usage{InputTokens: t.InputTokens - cached, CacheReadTokens: cached, OutputTokens: t.OutputTokens}
				c.HasUsage = true
			}
			// Other events echo the response items (user_message,
			// agent_message, agent_reasoning) or report progress.
		case "compacted":
			flush()
			cur = &transcript.Message{Role: transcript.RoleUser, At: l.Timestamp.UTC(),
				Content: []transcript.Block{transcript.TextBlock("[compacted by Codex] " + it.Message)}}
			flush()
		case "response_item":
			if !c.cxItem(n, l.Timestamp, it, add) {
				c.skip(n)
			}
		default:
			c.skip(n)
		}
	})
	flush()
	return c
}

// cxItem adds one response item; false when it is not understood.
func (c *Conversation) cxItem(n int, at time.Time, it cxItem, add func(string, time.Time, transcript.Block)) bool {
	switch it.Type {
	case "message":
		var parts []string
		for _, p := range it.Content {
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
		}
		role := it.Role
		if role == "" {
			return false
		}
		add(role, at, transcript.TextBlock(strings.Join(parts, "\n")))
	case "reasoning":
		// Summaries of hidden reasoning, often encrypted: nothing a
		// replay can send back. Passed over.
	case "function_call", "custom_tool_call", "local_shell_call":
		args := it.Arguments
		if it.Type == "custom_tool_call" {
			args = string(mustJSON(map[string]string{"input": it.Input}))
		}
		name, input, approx := cxTool(it.Name, args, c.Workspace)
		if approx {
			c.Approximate = append(c.Approximate, it.CallID)
		}
		c.tool(name)
		add(transcript.RoleAssistant, at, toolUse(it.CallID, name, input))
	case "function_call_output", "custom_tool_call_output":
		text, isErr := cxOutput(it.Output)
		add(transcript.RoleUser, at, transcript.Block{Type: transcript.BlockToolResult, ToolUseID: it.CallID,
			Content: text, IsError: isErr})
	default:
		return false
	}
	return true
}

// cxOutput is a call's output: a string, possibly itself JSON holding
// {"output", "metadata": {"exit_code"}}; or {"content", "success"}.
func cxOutput(raw json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		var o struct {
			Content string `json:"content"`
			Success *bool  `json:"success"`
		}
		if json.Unmarshal(raw, &o) == nil && o.Content != "" {
			return o.Content, o.Success != nil && !*o.Success
		}
		return string(raw), false
	}
	var o struct {
		Output   *string `json:"output"`
		Metadata struct {
			ExitCode int `json:"exit_code"`
		} `json:"metadata"`
	}
	if strings.HasPrefix(s, "{") && json.Unmarshal([]byte(s), &o) == nil && o.Output != nil {
		return *o.Output, o.Metadata.ExitCode != 0
	}
	return s, false
}

// cxTool maps a Codex call onto mecha's tools.
func cxTool(name, args, cwd string) (string, json.RawMessage, bool) {
	var in map[string]any
	if json.Unmarshal([]byte(args), &in) != nil {
		// Arguments that do not parse are kept as they are, as a string.
		return name, mustJSON(map[string]string{"arguments": args}), true
	}
	switch name {
	case "shell", "container.exec", "local_shell":
		var argv []string
		if a, ok := in["command"].([]any); ok {
			for _, w := range a {
				s, _ := w.(string)
				argv = append(argv, s)
			}
		}
		cmd, approx := "", false
		if len(argv) == 3 && (argv[0] == "bash" || argv[0] == "sh" || argv[0] == "zsh") && (argv[1] == "-lc" || argv[1] == "-c") {
			cmd = argv[2]
		} else {
			q := make([]string, len(argv))
			for i, w := range argv {
				q[i] = shQuote(w)
			}
			cmd, approx = strings.Join(q, " "), true
		}
		if wd, _ := in["workdir"].(string); wd != "" && wd != cwd {
			cmd, approx = "cd "+shQuote(wd)+" && "+cmd, true
		}
		return "shell", shellInput(cmd, in["timeout_ms"]), approx
	case "exec_command":
		cmd, _ := in["cmd"].(string)
		approx := false
		if wd, _ := in["workdir"].(string); wd != "" && wd != cwd {
			cmd, approx = "cd "+shQuote(wd)+" && "+cmd, true
		}
		return "shell", shellInput(cmd, in["timeout_ms"]), approx
	case "apply_patch":
		return name, mustJSON(in), true
	}
	return name, mustJSON(in), false
}

func shellInput(cmd string, timeoutMS any) json.RawMessage {
	out := map[string]any{"command": cmd}
	if ms, ok := timeoutMS.(float64); ok && ms > 0 {
		out["timeout_seconds"] = int((ms + 999) / 1000)
	}
	return mustJSON(out)
}
