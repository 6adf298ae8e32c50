package importer

import (
	"encoding/json"
	"slices"
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
	// compacted (and event_msg user_message)
	Message            string   `json:"message"`
	ReplacementHistory []cxItem `json:"replacement_history"`
}

// cxInjected are how the user-role items Codex writes itself begin: the
// environment, the user's and AGENTS.md instructions, a shell command the
// user ran, a turn's abort.
var cxInjected = []string{"<environment_context>", "<user_instructions>", "# AGENTS.md instructions for ",
	"<INSTRUCTIONS>", "<user_shell_command>", "<turn_aborted>"}

// ParseCodex reads a Codex rollout.
func ParseCodex(data []byte) *Conversation {
	c := &Conversation{Provider: "openai"}
	type entry struct {
		n  int
		l  cxLine
		it cxItem
	}
	var entries []entry
	lines(data, func(n int, raw []byte) {
		c.Entries++
		var l cxLine
		var it cxItem
		if json.Unmarshal(raw, &l) != nil || json.Unmarshal(l.Payload, &it) != nil {
			c.skip(n, transcript.SkipNotUnderstood, Units{})
			return
		}
		entries = append(entries, entry{n, l, it})
	})
	x := &cxBuild{c: c}
	for _, e := range entries {
		x.line(e.n, e.l, e.it)
	}
	x.flush()
	slices.Sort(c.SkippedLines)
	return c
}

// cxBuild puts a rollout's items together into messages.
type cxBuild struct {
	c   *Conversation
	cur *transcript.Message
}

func (x *cxBuild) flush() {
	c := x.c
	if x.cur != nil && len(x.cur.Content) > 0 {
		c.Messages = append(c.Messages, *x.cur)
		if x.cur.Role == transcript.RoleAssistant {
			c.Turns++
		}
	}
	x.cur = nil
}

// add adds a block: outputs gather in one user message, model items in
// one assistant message; a person's message stands alone.
func (x *cxBuild) add(role string, at time.Time, b transcript.Block) {
	joins := x.cur != nil && x.cur.Role == role &&
		(role == transcript.RoleAssistant || (b.Type == transcript.BlockToolResult && results(x.cur.Content)))
	if !joins {
		x.flush()
		x.cur = &transcript.Message{Role: role, At: at.UTC()}
	}
	x.cur.Content = append(x.cur.Content, b)
}

// line takes in one line of the rollout.
func (x *cxBuild) line(n int, l cxLine, it cxItem) {
	c := x.c
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
			return
		}
		// Other events echo the response items (user_message,
		// agent_message, agent_reasoning) or report progress.
		c.skip(n, transcript.SkipBookkeeping, Units{})
	case "compacted":
		x.flush()
		c.Compactions = append(c.Compactions, Compaction{Before: len(c.Messages), Summary: cxSummary(it), At: l.Timestamp})
	case "response_item":
		if reason, u := x.item(l.Timestamp, it); reason != "" {
			c.skip(n, reason, u)
		}
	default:
		c.skip(n, transcript.SkipNotUnderstood, Units{})
	}
}

// cxSummary is a compaction's summary: its message or, when Codex kept
// none (a remote compaction), the text of the history that replaced the
// conversation.
func cxSummary(it cxItem) string {
	if strings.TrimSpace(it.Message) != "" {
		return it.Message
	}
	var parts []string
	for _, h := range it.ReplacementHistory {
		if t := cxText(h); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// cxText is the text of a message item.
func cxText(it cxItem) string {
	var parts []string
	for _, p := range it.Content {
		if p.Text != "" {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// item adds one response item; it returns the reason it was not imported
// (and what it held), "" when it was.
func (x *cxBuild) item(at time.Time, it cxItem) (string, Units) {
	c := x.c
	switch it.Type {
	case "message":
		text := cxText(it)
		switch it.Role {
		case transcript.RoleAssistant:
			x.add(it.Role, at, transcript.TextBlock(text))
		case transcript.RoleUser:
			if injected(text) {
				return transcript.SkipInjected, Units{Prompts: 1}
			}
			x.add(it.Role, at, transcript.TextBlock(text))
		case "developer", "system":
			return transcript.SkipInjected, Units{}
		default:
			return transcript.SkipNotUnderstood, Units{}
		}
	case "reasoning":
		// Summaries of hidden reasoning, often encrypted: nothing a
		// replay can send back.
		return transcript.SkipReasoning, Units{}
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
		x.add(transcript.RoleAssistant, at, toolUse(it.CallID, name, input))
	case "function_call_output", "custom_tool_call_output":
		text, isErr := cxOutput(it.Output)
		x.add(transcript.RoleUser, at, transcript.Block{Type: transcript.BlockToolResult, ToolUseID: it.CallID,
			Content: text, IsError: isErr})
	case "web_search_call":
		return transcript.SkipServerTool, Units{}
	case "ghost_snapshot":
		return transcript.SkipBookkeeping, Units{}
	default:
		return transcript.SkipNotUnderstood, Units{}
	}
	return "", Units{}
}

// injected says whether a user-role item's text was written by Codex
// rather than typed: it begins as Codex's context does.
func injected(text string) bool {
	t := strings.TrimSpace(text)
	for _, p := range cxInjected {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// results says whether blocks are all tool results.
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

// cxOutput is a call's output: a list of content items, a string, possibly itself JSON holding
// {"output", "metadata": {"exit_code"}}; or {"content", "success"}.
func cxOutput(raw json.RawMessage) (string, bool) {
	var s string
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var texts []string
		for _, p := range parts {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		return strings.Join(texts, "\n"), false
	}
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
