package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/internal/wire"
	"github.com/mecha-agent/mecha/record/transcript"
)

// chunk is one streamed chunk, or (with Message in place of Delta) a whole
// unstreamed completion.
type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Delta        wireDelta  `json:"delta"`
		Message      *wireDelta `json:"message"`
		FinishReason *string    `json:"finish_reason"`
	} `json:"choices"`
	Usage *wireUsage      `json:"usage"`
	Error json.RawMessage `json:"error"`
}

type wireDelta struct {
	Content content `json:"content"`
	// Refusal is the model's refusal, which OpenAI sends in place of
	// content (structured outputs, safety): it is the answer's text.
	Refusal          string          `json:"refusal"`
	ReasoningContent string          `json:"reasoning_content"` // llama-server
	Reasoning        string          `json:"reasoning"`         // Ollama, OpenRouter
	ToolCalls        []toolCallDelta `json:"tool_calls"`
}

type toolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens        uint64 `json:"prompt_tokens"`
	CompletionTokens    uint64 `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens uint64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// content is a delta's (or a message's) content: a string, or, as
// Mistral sends it, a list of parts: text parts {"type":"text","text":...}
// and thinking parts {"type":"thinking","thinking":...} whose thinking is
// a string or itself a list of text parts. Parts of other types (a
// reference, an image) carry no text of the answer: they are skipped and
// counted (Response.Skipped), never dropped unsaid.
type content []piece

// piece is a run of text of one kind: "text" or "thinking"; or, of kind
// "skipped", a part that was not kept, text naming its type.
type piece struct{ kind, text string }

func (c *content) UnmarshalJSON(data []byte) error {
	*c = nil
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0 || string(data) == "null":
		return nil
	case data[0] != '[':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*c = content{{"text", s}}
		return nil
	}
	var parts []struct {
		Type     string          `json:"type"`
		Text     string          `json:"text"`
		Thinking json.RawMessage `json:"thinking"`
	}
	if err := json.Unmarshal(data, &parts); err != nil {
		return err
	}
	for _, p := range parts {
		switch p.Type {
		case "text":
			*c = append(*c, piece{"text", p.Text})
		case "thinking":
			var inner content
			if err := inner.UnmarshalJSON(p.Thinking); err != nil {
				return fmt.Errorf("thinking part: %w", err)
			}
			for _, q := range inner {
				if q.kind == "skipped" {
					*c = append(*c, piece{"skipped", "thinking/" + q.text})
					continue
				}
				*c = append(*c, piece{"thinking", q.text})
			}
		default:
			*c = append(*c, piece{"skipped", p.Type})
		}
	}
	return nil
}

// call is a tool call being assembled.
type call struct {
	id, name string
	args     strings.Builder
}

// assembler accumulates chunks into a response.
type assembler struct {
	model    string
	thinking strings.Builder
	text     strings.Builder
	calls    []*call
	byIndex  map[int]*call
	finish   string
	usage    *wireUsage
	onDelta  func(provider.Delta)
	skipped  map[string]int // content parts not kept, by type
}

func (a *assembler) add(ch *chunk) {
	if ch.Model != "" {
		a.model = ch.Model
	}
	if ch.Usage != nil {
		a.usage = ch.Usage
	}
	if len(ch.Choices) == 0 {
		return
	}
	choice := ch.Choices[0]
	d := choice.Delta
	if choice.Message != nil {
		d = *choice.Message
	}
	a.emit(&a.thinking, "thinking", d.ReasoningContent+d.Reasoning)
	for _, p := range d.Content {
		switch p.kind {
		case "thinking":
			a.emit(&a.thinking, "thinking", p.text)
		case "skipped":
			if a.skipped == nil {
				a.skipped = map[string]int{}
			}
			a.skipped[p.text]++
		default:
			a.emit(&a.text, "text", p.text)
		}
	}
	a.emit(&a.text, "text", d.Refusal)
	for _, tc := range d.ToolCalls {
		a.toolCall(tc)
	}
	if choice.FinishReason != nil && *choice.FinishReason != "" {
		a.finish = *choice.FinishReason
	}
}

func (a *assembler) emit(sb *strings.Builder, kind, s string) {
	if s == "" {
		return
	}
	sb.WriteString(s)
	if a.onDelta != nil {
		a.onDelta(provider.Delta{Kind: kind, Text: s})
	}
}

// toolCall folds one tool call delta in. With an index, the index names the
// call, unless it arrives with an id other than that call's (servers that
// number every call 0). Without an index (llama.cpp, some Ollama versions),
// a new id starts a new call and a delta without one continues the last.
func (a *assembler) toolCall(tc toolCallDelta) {
	var c *call
	if tc.Index != nil {
		c = a.byIndex[*tc.Index]
		if c != nil && tc.ID != "" && c.id != "" && tc.ID != c.id {
			c = nil
		}
	} else if n := len(a.calls); n > 0 && (tc.ID == "" || tc.ID == a.calls[n-1].id) {
		c = a.calls[n-1]
	}
	if c == nil {
		c = &call{id: tc.ID}
		a.calls = append(a.calls, c)
		if tc.Index != nil {
			if a.byIndex == nil {
				a.byIndex = map[int]*call{}
			}
			a.byIndex[*tc.Index] = c
		}
	}
	if c.id == "" {
		c.id = tc.ID
	}
	switch name := tc.Function.Name; {
	case c.name == "":
		c.name = name
	case name != "" && name != c.name:
		c.name += name
	}
	c.args.WriteString(tc.Function.Arguments)
}

// response builds the answer: thinking, then text, then the tool calls.
// A call the server gave no id is named call_N by its position.
func (a *assembler) response() *provider.Response {
	resp := &provider.Response{Model: a.model, StopReason: stopReason(a.finish, len(a.calls)), NativeStopReason: a.finish, Skipped: a.skipped}
	if a.thinking.Len() > 0 {
		resp.Content = append(resp.Content, transcript.Block{Type: transcript.BlockThinking, Thinking: a.thinking.String()})
	}
	if a.text.Len() > 0 {
		resp.Content = append(resp.Content, transcript.TextBlock(a.text.String()))
	}
	for i, c := range a.calls {
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i+1)
		}
		resp.Content = append(resp.Content, transcript.ToolUseBlock(id, c.name, wire.ToolInput(c.args.String())))
	}
	if u := a.usage; u != nil {
		var cached uint64
		if u.PromptTokensDetails != nil {
			cached = min(u.PromptTokensDetails.CachedTokens, u.PromptTokens)
		}
		resp.Usage = transcript.Usage{InputTokens: u.PromptTokens - cached, OutputTokens: u.CompletionTokens, CacheReadTokens: cached}
	}
	return resp
}

// readStream reads data: lines until [DONE]. progress, when not nil, is
// called for each chunk: comments and empty data lines are not part of the
// answer.
func (c *Client) readStream(ctx context.Context, body io.Reader, progress func(), onDelta func(provider.Delta)) (*provider.Response, error) {
	r := wire.NewReader(body)
	a := &assembler{onDelta: onDelta}
	for {
		data, err := r.NextData()
		if err != nil {
			// A last line without its newline is complete only if it is [DONE].
			switch {
			case string(data) == "[DONE]":
				return a.response(), nil
			case ctx.Err() != nil:
				return nil, c.w.TransportError(ctx, err)
			case wire.AsError(err) != nil:
				return nil, wire.AsError(err) // a timeout
			case errors.Is(err, wire.ErrTruncated):
				// a last line other than [DONE], cut short
			case !errors.Is(err, io.EOF):
				return nil, c.w.Fail(true, "stream ended early: %v", err)
			case a.finish != "" && a.usage != nil:
				return a.response(), nil // a server that does not send [DONE]
			}
			return nil, c.w.Fail(true, "stream ended early (no [DONE])")
		}
		if string(data) == "[DONE]" {
			return a.response(), nil
		}
		if len(data) == 0 {
			continue
		}
		var ch chunk
		if jerr := json.Unmarshal(data, &ch); jerr != nil {
			return nil, c.w.Fail(false, "malformed stream chunk %s: %v", c.w.Quote(data), jerr)
		}
		if progress != nil {
			progress()
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" {
			return nil, c.w.StreamError(wire.ErrorBody(data))
		}
		a.add(&ch)
	}
}

// readCompletion reads a whole, unstreamed completion.
func (c *Client) readCompletion(ctx context.Context, body io.Reader) (*provider.Response, error) {
	var ch chunk
	data, err := c.w.ReadAnswer(ctx, body, &ch)
	if err != nil {
		return nil, err
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		return nil, c.w.StreamError(wire.ErrorBody(data))
	}
	a := &assembler{}
	a.add(&ch)
	return a.response(), nil
}
