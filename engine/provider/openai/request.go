package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

type wireRequest struct {
	Model               string         `json:"model"`
	Messages            []wireMessage  `json:"messages"`
	Tools               []wireTool     `json:"tools,omitempty"`
	MaxTokens           int            `json:"max_tokens,omitempty"`
	MaxCompletionTokens int            `json:"max_completion_tokens,omitempty"`
	Temperature         *float64       `json:"temperature,omitempty"`
	Seed                *uint64        `json:"seed,omitempty"`
	ReasoningEffort     string         `json:"reasoning_effort,omitempty"`
	Stream              bool           `json:"stream"`
	StreamOptions       *streamOptions `json:"stream_options,omitempty"`
	CachePrompt         *bool          `json:"cache_prompt,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a *string (null beside tool calls) or, for a user
	// message with images, a []contentPart.
	Content    any            `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

// contentPart is one part of a user message's content array: text, or an
// image as a data URL.
type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string      `json:"type"`
	Function wireToolDef `json:"function"`
}

type wireToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Unsent names the settings of req that the client of the named flavour
// does not send: thinking (the wire has no such switch; reasoning models
// reason on their own, and Effort steers them), and cache_prompt except to
// llama-server (NameLocal).
func Unsent(name string, req *provider.Request) []string {
	if name == NameLocal {
		return []string{provider.SettingThinking}
	}
	return []string{provider.SettingThinking, provider.SettingCachePrompt}
}

// buildRequest maps a neutral request to the wire. See the package
// documentation for the choices it makes.
func (c *Client) buildRequest(req *provider.Request) *wireRequest {
	w := &wireRequest{
		Model:           req.Model,
		Temperature:     req.Temperature,
		Seed:            req.Seed,
		ReasoningEffort: req.Effort,
		Stream:          true,
		StreamOptions:   &streamOptions{IncludeUsage: true},
	}
	if w.Model == "" {
		w.Model = c.model
	}
	if c.name == NameLocal {
		w.MaxTokens = req.MaxTokens
		cache := req.CachePrompt
		w.CachePrompt = &cache
	} else {
		w.MaxCompletionTokens = req.MaxTokens
	}
	for _, t := range req.Tools {
		params := t.InputSchema
		if len(bytes.TrimSpace(params)) == 0 || !json.Valid(params) {
			params = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		w.Tools = append(w.Tools, wireTool{Type: "function", Function: wireToolDef{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	if req.System != "" {
		w.Messages = append(w.Messages, wireMessage{Role: "system", Content: ptr(req.System)})
	}
	for _, m := range req.Messages {
		w.Messages = append(w.Messages, wireMessages(m)...)
	}
	if w.Messages == nil {
		w.Messages = []wireMessage{}
	}
	return w
}

// wireMessages maps one transcript message to zero or more wire messages.
// A user message's tool results become "tool" messages, placed before its
// text so that they follow the assistant's calls directly. Thinking and
// verbatim blocks have no slot on this wire and are dropped.
func wireMessages(m transcript.Message) []wireMessage {
	var out []wireMessage
	var texts []string
	var calls []wireToolCall
	var images []contentPart
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			if b.Text != "" {
				texts = append(texts, b.Text)
			}
		case transcript.BlockToolUse:
			calls = append(calls, wireToolCall{ID: b.ID, Type: "function", Function: wireFunction{Name: b.Name, Arguments: arguments(b.Input)}})
		case transcript.BlockToolResult:
			content := b.Content
			if b.IsError {
				content = "error: " + content
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: b.ToolUseID, Content: &content})
		case transcript.BlockImage:
			if b.Data != nil && m.Role != transcript.RoleAssistant {
				url := "data:" + b.MediaType + ";base64," + base64.StdEncoding.EncodeToString(b.Data)
				images = append(images, contentPart{Type: "image_url", ImageURL: &imageURL{URL: url}})
			}
		}
	}
	var text *string
	if len(texts) > 0 {
		text = ptr(strings.Join(texts, "\n\n"))
	}
	switch {
	case m.Role == transcript.RoleAssistant && (text != nil || len(calls) > 0):
		out = append(out, wireMessage{Role: "assistant", Content: text, ToolCalls: calls})
	case m.Role != transcript.RoleAssistant && len(images) > 0:
		var parts []contentPart
		if text != nil {
			parts = append(parts, contentPart{Type: "text", Text: *text})
		}
		out = append(out, wireMessage{Role: "user", Content: append(parts, images...)})
	case m.Role != transcript.RoleAssistant && text != nil:
		out = append(out, wireMessage{Role: "user", Content: text})
	}
	return out
}

// arguments returns a tool call's input as the wire's arguments string. An
// input kept as a JSON string (arguments that were not valid JSON when the
// model sent them) goes back as the original text.
func arguments(in json.RawMessage) string {
	in = bytes.TrimSpace(in)
	if len(in) == 0 || string(in) == "null" {
		return "{}"
	}
	if in[0] == '"' {
		var s string
		if json.Unmarshal(in, &s) == nil {
			return s
		}
	}
	var buf bytes.Buffer
	if json.Compact(&buf, in) == nil {
		return buf.String()
	}
	return string(in)
}

func ptr[T any](v T) *T { return &v }
