package fakellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// validateAnthropic checks a Messages API request against the rules the
// real API enforces and mecha relies on.
func validateAnthropic(body []byte) error {
	var req struct {
		Model     string          `json:"model"`
		MaxTokens *int            `json:"max_tokens"`
		System    json.RawMessage `json:"system"`
		Messages  []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Name         string          `json:"name"`
			InputSchema  json.RawMessage `json:"input_schema"`
			CacheControl json.RawMessage `json:"cache_control"`
		} `json:"tools"`
		Thinking *struct {
			Type         string `json:"type"`
			BudgetTokens int    `json:"budget_tokens"`
		} `json:"thinking"`
		Temperature *float64 `json:"temperature"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("body is not a JSON request: %v", err)
	}
	switch {
	case req.Model == "":
		return errors.New("model: field required")
	case req.MaxTokens == nil:
		return errors.New("max_tokens: field required")
	case *req.MaxTokens < 1:
		return errors.New("max_tokens: must be at least 1")
	case len(req.Messages) == 0:
		return errors.New("messages: at least one message is required")
	}
	breakpoints := bytes.Count(req.System, []byte(`"cache_control"`))
	if t := req.Thinking; t != nil && t.Type == "enabled" {
		if t.BudgetTokens < 1024 || t.BudgetTokens >= *req.MaxTokens {
			return fmt.Errorf("thinking.budget_tokens: must be at least 1024 and less than max_tokens (%d, %d)", t.BudgetTokens, *req.MaxTokens)
		}
		if req.Temperature != nil && *req.Temperature != 1 {
			return errors.New("temperature: may only be set to 1 when thinking is enabled")
		}
	}
	var names []string
	for i, t := range req.Tools {
		switch {
		case t.Name == "":
			return fmt.Errorf("tools.%d.name: field required", i)
		case slices.Contains(names, t.Name):
			return fmt.Errorf("tools: tool names must be unique (%q)", t.Name)
		case !isObject(t.InputSchema):
			return fmt.Errorf("tools.%d.input_schema: an object is required", i)
		}
		names = append(names, t.Name)
		if len(t.CacheControl) > 0 {
			breakpoints++
		}
	}
	var prevUses []string // tool_use ids of the previous assistant message
	for i, m := range req.Messages {
		if m.Role != "user" && m.Role != "assistant" {
			return fmt.Errorf("messages.%d.role: must be \"user\" or \"assistant\", not %q", i, m.Role)
		}
		if i == 0 && m.Role != "user" {
			return errors.New("messages.0: the first message must use the \"user\" role")
		}
		if i > 0 && req.Messages[i-1].Role == m.Role {
			return fmt.Errorf("messages.%d: roles must alternate between \"user\" and \"assistant\"; two %q messages in a row", i, m.Role)
		}
		blocks, err := anthropicBlocks(m.Content)
		if err != nil {
			return fmt.Errorf("messages.%d.content: %v", i, err)
		}
		var uses, results, serverUses []string
		for j, b := range blocks {
			if len(b.CacheControl) > 0 {
				breakpoints++
			}
			if err := b.check(m.Role); err != nil {
				return fmt.Errorf("messages.%d.content.%d: %v", i, j, err)
			}
			switch {
			case b.Type == "server_tool_use" || b.Type == "mcp_tool_use":
				serverUses = append(serverUses, b.ID)
			case serverResults[b.Type] && !slices.Contains(serverUses, b.ToolUseID):
				return fmt.Errorf("messages.%d.content.%d: %s.tool_use_id %q answers no server tool use before it in this message", i, j, b.Type, b.ToolUseID)
			}
			switch b.Type {
			case "tool_use":
				uses = append(uses, b.ID)
			case "tool_result":
				if !slices.Contains(prevUses, b.ToolUseID) {
					return fmt.Errorf("messages.%d.content.%d: unexpected tool_use_id %q in tool_result: it answers no tool_use block of the previous message", i, j, b.ToolUseID)
				}
				results = append(results, b.ToolUseID)
			}
		}
		if m.Role == "user" {
			for _, id := range prevUses {
				if !slices.Contains(results, id) {
					return fmt.Errorf("messages.%d: tool_use id %q has no tool_result block in this message", i, id)
				}
			}
		}
		prevUses = uses
	}
	if breakpoints > 4 {
		return fmt.Errorf("a request may carry at most 4 cache_control blocks, found %d", breakpoints)
	}
	return nil
}

type anthropicBlock struct {
	Type         string          `json:"type"`
	Text         *string         `json:"text"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	ToolUseID    string          `json:"tool_use_id"`
	Thinking     *string         `json:"thinking"`
	Signature    string          `json:"signature"`
	Data         string          `json:"data"`
	ServerName   string          `json:"server_name"`
	CacheControl json.RawMessage `json:"cache_control"`
}

// serverResults are the result blocks of the API's server-side tools (web
// search and fetch, code execution, tool search, the MCP connector): the
// assistant's own, each answering a server tool use before it.
var serverResults = map[string]bool{
	"web_search_tool_result": true, "web_fetch_tool_result": true, "code_execution_tool_result": true,
	"bash_code_execution_tool_result": true, "text_editor_code_execution_tool_result": true,
	"tool_search_tool_result": true, "mcp_tool_result": true,
}

// anthropicBlocks reads a message's content: a non-empty string or array.
func anthropicBlocks(raw json.RawMessage) ([]anthropicBlock, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return nil, errors.New("must not be empty")
		}
		return []anthropicBlock{{Type: "text", Text: &s}}, nil
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, errors.New("must be a string or an array of content blocks")
	}
	if len(blocks) == 0 {
		return nil, errors.New("must not be empty")
	}
	return blocks, nil
}

func (b *anthropicBlock) check(role string) error {
	only := func(r string) error {
		if role != r {
			return fmt.Errorf("%s blocks may only appear in %s messages", b.Type, r)
		}
		return nil
	}
	switch b.Type {
	case "text":
		if b.Text == nil || *b.Text == "" {
			return errors.New("text content blocks must be non-empty")
		}
	case "image", "document":
	case "tool_use":
		if b.ID == "" || b.Name == "" || !isObject(b.Input) {
			return errors.New("tool_use blocks need an id, a name and an input object")
		}
		return only("assistant")
	case "tool_result":
		if b.ToolUseID == "" {
			return errors.New("tool_result.tool_use_id: field required")
		}
		return only("user")
	case "thinking":
		if b.Thinking == nil || b.Signature == "" {
			return errors.New("thinking blocks need thinking and a signature")
		}
		return only("assistant")
	case "redacted_thinking":
		if b.Data == "" {
			return errors.New("redacted_thinking.data: field required")
		}
		return only("assistant")
	case "server_tool_use", "mcp_tool_use":
		if b.ID == "" || b.Name == "" || !isObject(b.Input) {
			return fmt.Errorf("%s blocks need an id, a name and an input object", b.Type)
		}
		if b.Type == "mcp_tool_use" && b.ServerName == "" {
			return errors.New("mcp_tool_use.server_name: field required")
		}
		return only("assistant")
	default:
		if serverResults[b.Type] {
			if b.ToolUseID == "" {
				return fmt.Errorf("%s.tool_use_id: field required", b.Type)
			}
			return only("assistant")
		}
		return fmt.Errorf("unknown content block type %q", b.Type)
	}
	return nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// validateOpenAI checks a Chat Completions request.
func validateOpenAI(body []byte) error {
	var req struct {
		Model    string `json:"model"`
		Messages []struct {
			Role      string          `json:"role"`
			Content   json.RawMessage `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string          `json:"name"`
					Arguments json.RawMessage `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Type     string `json:"type"`
			Function *struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
		Stream              bool            `json:"stream"`
		StreamOptions       json.RawMessage `json:"stream_options"`
		MaxTokens           *int            `json:"max_tokens"`
		MaxCompletionTokens *int            `json:"max_completion_tokens"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return fmt.Errorf("body is not a JSON request: %v", err)
	}
	switch {
	case req.Model == "":
		return errors.New("model: field required")
	case len(req.Messages) == 0:
		return errors.New("messages: at least one message is required")
	case len(req.StreamOptions) > 0 && string(req.StreamOptions) != "null" && !req.Stream:
		return errors.New("stream_options: only allowed when stream is true")
	case req.MaxTokens != nil && req.MaxCompletionTokens != nil:
		return errors.New("max_tokens and max_completion_tokens: send one, not both")
	}
	for i, t := range req.Tools {
		if t.Type != "function" || t.Function == nil || t.Function.Name == "" {
			return fmt.Errorf("tools[%d]: want {\"type\":\"function\",\"function\":{\"name\":...}}", i)
		}
	}
	var pending []string // calls of the last assistant message not yet answered
	for i, m := range req.Messages {
		if m.Role != "tool" && len(pending) > 0 {
			return fmt.Errorf("messages[%d]: an assistant message with tool_calls must be followed by tool messages answering each tool_call_id; missing %s", i, strings.Join(pending, ", "))
		}
		switch m.Role {
		case "system", "developer", "user":
			if len(m.Content) == 0 || string(m.Content) == "null" {
				return fmt.Errorf("messages[%d].content: field required for role %q", i, m.Role)
			}
		case "assistant":
			for j, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
					return fmt.Errorf("messages[%d].tool_calls[%d]: id, type \"function\" and function.name are required", i, j)
				}
				if a := bytes.TrimSpace(c.Function.Arguments); len(a) == 0 || a[0] != '"' {
					return fmt.Errorf("messages[%d].tool_calls[%d].function.arguments: must be a string", i, j)
				}
				pending = append(pending, c.ID)
			}
		case "tool":
			k := slices.Index(pending, m.ToolCallID)
			if k < 0 {
				return fmt.Errorf("messages[%d]: tool message with tool_call_id %q answers no tool call of the preceding assistant message", i, m.ToolCallID)
			}
			pending = slices.Delete(pending, k, k+1)
		default:
			return fmt.Errorf("messages[%d].role: unknown role %q", i, m.Role)
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("messages: tool calls %s have no tool message", strings.Join(pending, ", "))
	}
	return nil
}
