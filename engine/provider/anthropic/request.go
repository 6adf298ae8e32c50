package anthropic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Thinking budgets by effort, sent as thinking.budget_tokens.
const (
	BudgetLow    = 2048
	BudgetMedium = 8192
	BudgetHigh   = 24576
)

// ThinkingBudget returns the thinking budget for an effort: "low", "high",
// and anything else (medium, or unset) the medium budget.
func ThinkingBudget(effort string) int {
	switch effort {
	case "low":
		return BudgetLow
	case "high":
		return BudgetHigh
	}
	return BudgetMedium
}

type wireRequest struct {
	Model       string        `json:"model"`
	MaxTokens   int           `json:"max_tokens"`
	System      any           `json:"system,omitempty"` // a string, or blocks when caching
	Messages    []wireMessage `json:"messages"`
	Tools       []*wireTool   `json:"tools,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	Thinking    *wireThinking `json:"thinking,omitempty"`
	Stream      bool          `json:"stream"`
}

type wireMessage struct {
	Role    string `json:"role"`
	Content []any  `json:"content"`
}

type wireThinking struct {
	Type         string `json:"type"`
	BudgetTokens int    `json:"budget_tokens"`
}

type cacheControl struct {
	Type string `json:"type"`
}

var ephemeral = &cacheControl{Type: "ephemeral"}

type wireTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
	// Citations go back as the API gave them.
	Citations    json.RawMessage `json:"citations,omitempty"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type toolUseBlock struct {
	Type         string          `json:"type"`
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Input        json.RawMessage `json:"input"`
	CacheControl *cacheControl   `json:"cache_control,omitempty"`
}

type toolResultBlock struct {
	Type         string        `json:"type"`
	ToolUseID    string        `json:"tool_use_id"`
	Content      string        `json:"content,omitempty"`
	IsError      bool          `json:"is_error,omitempty"`
	CacheControl *cacheControl `json:"cache_control,omitempty"`
}

type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type thinkingBlock struct {
	Type      string `json:"type"`
	Thinking  string `json:"thinking"`
	Signature string `json:"signature"`
}

// Unsent names the settings of req that buildRequest does not send: the
// seed (the API has none), and the effort without thinking (it sets only
// the thinking budget).
func Unsent(req *provider.Request) []string {
	if !req.Thinking {
		return []string{provider.SettingSeed, provider.SettingEffort}
	}
	return []string{provider.SettingSeed}
}

// buildRequest maps a neutral request to the wire. See the package
// documentation for the choices it makes.
func buildRequest(req *provider.Request) *wireRequest {
	w := &wireRequest{
		Model:       req.Model,
		MaxTokens:   req.MaxTokens,
		Temperature: req.Temperature,
		Stream:      true,
	}
	if w.Model == "" {
		w.Model = DefaultModel
	}
	if w.MaxTokens <= 0 {
		w.MaxTokens = DefaultMaxTokens
	}
	if req.Thinking {
		budget := ThinkingBudget(req.Effort)
		w.Thinking = &wireThinking{Type: "enabled", BudgetTokens: budget}
		if w.MaxTokens <= budget {
			w.MaxTokens += budget
		}
	}
	if req.System != "" {
		if req.CachePrompt {
			w.System = []*textBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
		} else {
			w.System = req.System
		}
	}
	for _, t := range req.Tools {
		schema := t.InputSchema
		if len(bytes.TrimSpace(schema)) == 0 || !json.Valid(schema) {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, &wireTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	if req.CachePrompt && len(w.Tools) > 0 {
		w.Tools[len(w.Tools)-1].CacheControl = ephemeral
	}
	w.Messages = wireMessages(req.Messages)
	if req.CachePrompt {
		markLastUser(w.Messages)
	}
	return w
}

// wireMessages maps the conversation, dropping blocks the API cannot take
// and then messages left empty, and merging neighbours of the same role so
// that roles alternate as the API requires.
func wireMessages(msgs []transcript.Message) []wireMessage {
	var out []wireMessage
	for _, m := range msgs {
		var content []any
		for _, b := range m.Content {
			if wb := wireBlock(b); wb != nil {
				content = append(content, wb)
			}
		}
		if len(content) == 0 {
			continue
		}
		if n := len(out); n > 0 && out[n-1].Role == m.Role {
			out[n-1].Content = append(out[n-1].Content, content...)
			continue
		}
		out = append(out, wireMessage{Role: m.Role, Content: content})
	}
	if out == nil {
		out = []wireMessage{}
	}
	return out
}

func wireBlock(b transcript.Block) any {
	switch b.Type {
	case transcript.BlockText:
		if b.Text == "" {
			return nil // the API refuses empty text blocks
		}
		return &textBlock{Type: b.Type, Text: b.Text, Citations: b.Citations}
	case transcript.BlockToolUse:
		return &toolUseBlock{Type: b.Type, ID: b.ID, Name: b.Name, Input: objectInput(b.Input)}
	case transcript.BlockToolResult:
		return &toolResultBlock{Type: b.Type, ToolUseID: b.ToolUseID, Content: b.Content, IsError: b.IsError}
	case transcript.BlockThinking:
		if b.Signature == "" {
			return nil // thinking from another provider: the API would refuse it
		}
		return &thinkingBlock{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature}
	case transcript.BlockImage:
		if b.SHA256 != "" {
			if b.Data == nil {
				return nil // the harness loads the bytes; none here means none to send
			}
			return &imageBlock{Type: b.Type, Source: imageSource{Type: "base64", MediaType: b.MediaType, Data: base64.StdEncoding.EncodeToString(b.Data)}}
		}
	}
	if len(b.Raw) > 0 && json.Valid(b.Raw) {
		return b.Raw // redacted_thinking and other blocks kept verbatim
	}
	return nil
}

// objectInput returns a tool call's input as the API wants it, a JSON
// object; anything else (an argument string another provider could not
// parse) becomes {}.
func objectInput(in json.RawMessage) json.RawMessage {
	in = bytes.TrimSpace(in)
	if len(in) > 0 && in[0] == '{' && json.Valid(in) {
		return in
	}
	return json.RawMessage(`{}`)
}

// markLastUser puts a cache breakpoint on the last block of the last user
// message, so that the whole conversation so far is cached.
func markLastUser(msgs []wireMessage) {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role != transcript.RoleUser {
			continue
		}
		switch b := msgs[i].Content[len(msgs[i].Content)-1].(type) {
		case *textBlock:
			b.CacheControl = ephemeral
		case *toolResultBlock:
			b.CacheControl = ephemeral
		case *toolUseBlock:
			b.CacheControl = ephemeral
		}
		return
	}
}
