package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/internal/wire"
	"github.com/mecha-agent/mecha/record/transcript"
)

// streamEvent is the union of the fields of every Messages stream event.
type streamEvent struct {
	Type    string `json:"type"`
	Message *struct {
		Model string    `json:"model"`
		Usage wireUsage `json:"usage"`
	} `json:"message"`
	Index        int             `json:"index"`
	ContentBlock json.RawMessage `json:"content_block"`
	Delta        *struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		Thinking    string `json:"thinking"`
		Signature   string `json:"signature"`
		StopReason  string `json:"stop_reason"`
		// Citation is a citations_delta's one citation.
		Citation json.RawMessage `json:"citation"`
	} `json:"delta"`
	Usage *wireUsage `json:"usage"`
	Error *struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	} `json:"error"`
}

// wireUsage holds the counts an event carries; absent ones stay nil, so a
// message_delta does not zero what message_start reported.
type wireUsage struct {
	InputTokens              *uint64 `json:"input_tokens"`
	OutputTokens             *uint64 `json:"output_tokens"`
	CacheCreationInputTokens *uint64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *uint64 `json:"cache_read_input_tokens"`
}

func (w *wireUsage) apply(u *transcript.Usage) {
	set := func(dst *uint64, src *uint64) {
		if src != nil {
			*dst = *src
		}
	}
	set(&u.InputTokens, w.InputTokens)
	set(&u.OutputTokens, w.OutputTokens)
	set(&u.CacheWriteTokens, w.CacheCreationInputTokens)
	set(&u.CacheReadTokens, w.CacheReadInputTokens)
}

// partial is a content block being assembled.
type partial struct {
	block transcript.Block
	json  strings.Builder // a tool call's input, as it streams
}

// readStream assembles a streamed message. progress, when not nil, is
// called for each event that is part of the answer: every event but pings
// and events without data.
func (c *Client) readStream(ctx context.Context, body io.Reader, progress func(), onDelta func(provider.Delta)) (*provider.Response, error) {
	r := wire.NewReader(body)
	resp := &provider.Response{}
	var blocks []*partial
	byIndex := map[int]*partial{}
	for {
		ev, err := r.Next()
		if err != nil {
			if ctx.Err() != nil {
				return nil, c.w.TransportError(ctx, err)
			}
			if perr := wire.AsError(err); perr != nil {
				return nil, perr // a timeout
			}
			if errors.Is(err, io.EOF) {
				return nil, c.w.Fail(true, "stream ended early (no message_stop)")
			}
			return nil, c.w.Fail(true, "stream ended early: %v", err)
		}
		if len(bytes.TrimSpace(ev.Data)) == 0 {
			continue
		}
		var e streamEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return nil, c.w.Fail(false, "malformed %s event %s: %v", ev.Name, c.w.Quote(ev.Data), err)
		}
		if e.Type == "" {
			e.Type = ev.Name
		}
		if e.Type != "ping" && progress != nil {
			progress()
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				resp.Model = e.Message.Model
				e.Message.Usage.apply(&resp.Usage)
			}
		case "content_block_start":
			p, err := c.startBlock(e.ContentBlock)
			if err != nil {
				return nil, err
			}
			if byIndex[e.Index] != nil {
				return nil, c.w.Fail(false, "malformed stream: block %d started twice", e.Index)
			}
			byIndex[e.Index] = p
			blocks = append(blocks, p)
		case "content_block_delta":
			p := byIndex[e.Index]
			if p == nil || e.Delta == nil {
				return nil, c.w.Fail(false, "malformed stream: delta for unknown block %d", e.Index)
			}
			if e.Delta.Type == "citations_delta" {
				p.cite(e.Delta.Citation)
				break
			}
			applyDelta(p, e.Delta.Type, e.Delta.Text, e.Delta.PartialJSON, e.Delta.Thinking, e.Delta.Signature, onDelta)
		case "content_block_stop":
			if p := byIndex[e.Index]; p != nil && p.json.Len() > 0 {
				p.setInput(wire.ToolInput(p.json.String()))
			}
		case "message_delta":
			if e.Delta != nil && e.Delta.StopReason != "" {
				resp.StopReason = stopReason(e.Delta.StopReason)
				resp.NativeStopReason = e.Delta.StopReason
			}
			if e.Usage != nil {
				e.Usage.apply(&resp.Usage)
			}
		case "message_stop":
			for _, p := range blocks {
				resp.Content = append(resp.Content, p.block)
			}
			if resp.StopReason == "" {
				resp.StopReason = provider.StopOther
			}
			return resp, nil
		case "error":
			typ, msg := "", ""
			if e.Error != nil {
				typ, msg = e.Error.Type, e.Error.Message
			}
			return nil, c.w.StreamError(typ, msg)
		}
		// ping and event types added to the API later are ignored.
	}
}

// startBlock begins a content block. Block types other than text, tool_use
// and thinking (redacted_thinking, server tool blocks) are kept verbatim.
func (c *Client) startBlock(raw json.RawMessage) (*partial, error) {
	var b struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		ID        string          `json:"id"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		Thinking  string          `json:"thinking"`
		Signature string          `json:"signature"`
		Citations json.RawMessage `json:"citations"`
	}
	if err := json.Unmarshal(raw, &b); err != nil || b.Type == "" {
		return nil, c.w.Fail(false, "malformed stream: content_block_start without a block")
	}
	p := &partial{}
	switch b.Type {
	case transcript.BlockText:
		p.block = transcript.TextBlock(b.Text)
		if !noCitations(b.Citations) {
			p.block.Citations = b.Citations
		}
	case transcript.BlockToolUse:
		p.block = transcript.ToolUseBlock(b.ID, b.Name, wire.ToolInput(string(b.Input)))
	case transcript.BlockThinking:
		p.block = transcript.Block{Type: b.Type, Thinking: b.Thinking, Signature: b.Signature}
	default:
		p.block = transcript.Block{Type: b.Type, Raw: append(json.RawMessage(nil), raw...)}
	}
	return p, nil
}

// noCitations reports whether a text block's "citations" says none:
// absent, null or [] (streams start every text block with one of these).
func noCitations(c json.RawMessage) bool {
	c = bytes.TrimSpace(c)
	if len(c) == 0 || string(c) == "null" {
		return true
	}
	var list []json.RawMessage
	return json.Unmarshal(c, &list) == nil && len(list) == 0
}

// cite adds one citation (a citations_delta's) to a text block's
// citations, which the API sends back with the block.
func (p *partial) cite(c json.RawMessage) {
	c = bytes.TrimSpace(c)
	if len(c) == 0 || string(c) == "null" {
		return
	}
	list := bytes.TrimSpace(p.block.Citations)
	if len(list) < 2 || list[0] != '[' {
		list = []byte("[]")
	}
	out := append([]byte(nil), list[:len(list)-1]...)
	if len(bytes.TrimSpace(out[1:])) > 0 {
		out = append(out, ',')
	}
	out = append(out, c...)
	p.block.Citations = append(out, ']')
}

// setInput gives a block the input streamed for it: a tool call's Input,
// or the "input" of a block kept verbatim (server_tool_use, mcp_tool_use
// and any other block whose input streams), which content_block_start
// sent as {}. Sent back as recorded, the block then says what the model
// asked for.
func (p *partial) setInput(in json.RawMessage) {
	if p.block.Type == transcript.BlockToolUse {
		p.block.Input = in
		return
	}
	if raw, err := setField(p.block.Raw, "input", in); err == nil {
		p.block.Raw = raw
	}
}

// setField returns the JSON object obj with the value of key replaced by
// v (or added last when obj has none), its other members as they were, in
// their order.
func setField(obj json.RawMessage, key string, v json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out bytes.Buffer
	member := func(k string, val json.RawMessage) {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(val)
	}
	out.WriteByte('{')
	found := false
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k, _ := t.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return nil, err
		}
		if k == key {
			val, found = v, true
		}
		member(k, val)
	}
	if !found {
		member(key, v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

func applyDelta(p *partial, typ, text, partialJSON, thinking, signature string, onDelta func(provider.Delta)) {
	switch typ {
	case "text_delta":
		p.block.Text += text
		if onDelta != nil && text != "" {
			onDelta(provider.Delta{Kind: "text", Text: text})
		}
	case "input_json_delta":
		p.json.WriteString(partialJSON)
	case "thinking_delta":
		p.block.Thinking += thinking
		if onDelta != nil && thinking != "" {
			onDelta(provider.Delta{Kind: "thinking", Text: thinking})
		}
	case "signature_delta":
		p.block.Signature += signature
	}
}

// readMessage reads a whole, unstreamed message.
func (c *Client) readMessage(ctx context.Context, body io.Reader) (*provider.Response, error) {
	var m struct {
		Model      string             `json:"model"`
		Content    []transcript.Block `json:"content"`
		StopReason string             `json:"stop_reason"`
		Usage      wireUsage          `json:"usage"`
	}
	if _, err := c.w.ReadAnswer(ctx, body, &m); err != nil {
		return nil, err
	}
	resp := &provider.Response{Model: m.Model, Content: m.Content, StopReason: stopReason(m.StopReason), NativeStopReason: m.StopReason}
	m.Usage.apply(&resp.Usage)
	return resp, nil
}
