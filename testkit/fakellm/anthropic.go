package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// anthropicWire speaks the Messages API.
type anthropicWire struct{ s *Server }

type obj = map[string]any

func (anthropicWire) key(r *http.Request) string { return r.Header.Get("X-Api-Key") }

func (anthropicWire) validate(r *http.Request, body []byte) error {
	if r.Header.Get("Anthropic-Version") == "" {
		return fmt.Errorf("anthropic-version: header required")
	}
	return validateAnthropic(body)
}

func (anthropicWire) errorBody(typ, msg string) any {
	return obj{"type": "error", "error": obj{"type": typ, "message": msg}}
}

// keepAlive is the API's ping event.
func (anthropicWire) keepAlive() string { return "event: ping\ndata: {\"type\": \"ping\"}\n\n" }

func (w anthropicWire) errorEvent(typ, msg string) event {
	return newEvent("error", w.errorBody(typ, msg))
}

func anthropicUsage(a *answer) obj {
	return obj{
		"input_tokens":                a.usage.InputTokens,
		"cache_creation_input_tokens": a.usage.CacheWriteTokens,
		"cache_read_input_tokens":     a.usage.CacheReadTokens,
		"output_tokens":               a.usage.OutputTokens,
	}
}

func signature(t *Turn) string {
	if t.Signature != "" {
		return t.Signature
	}
	return "fakellm-signature"
}

// events renders an answer as the stream the API sends: message_start, a
// ping, one block per thinking, redacted thinking, text and tool call (in
// that order), message_delta and message_stop.
func (w anthropicWire) events(t *Turn, a *answer) []event {
	id := fmt.Sprintf("msg_fake_%d", a.n)
	start := anthropicUsage(a)
	start["output_tokens"] = 1
	evs := []event{
		newEvent("message_start", obj{"type": "message_start", "message": obj{
			"id": id, "type": "message", "role": "assistant", "model": a.model, "content": []any{},
			"stop_reason": nil, "stop_sequence": nil, "usage": start}}),
		newEvent("ping", obj{"type": "ping"}),
	}
	index := 0
	block := func(start obj, deltas []obj) {
		evs = append(evs, newEvent("content_block_start", obj{"type": "content_block_start", "index": index, "content_block": start}))
		for _, d := range deltas {
			evs = append(evs, newEvent("content_block_delta", obj{"type": "content_block_delta", "index": index, "delta": d}))
		}
		evs = append(evs, newEvent("content_block_stop", obj{"type": "content_block_stop", "index": index}))
		index++
	}
	if t.Thinking != "" {
		var ds []obj
		for _, p := range words(t.Thinking) {
			ds = append(ds, obj{"type": "thinking_delta", "thinking": p})
		}
		ds = append(ds, obj{"type": "signature_delta", "signature": signature(t)})
		block(obj{"type": "thinking", "thinking": "", "signature": ""}, ds)
	}
	if t.RedactedThinking != "" {
		block(obj{"type": "redacted_thinking", "data": t.RedactedThinking}, nil)
	}
	if t.Text != "" {
		var ds []obj
		for _, p := range words(t.Text) {
			ds = append(ds, obj{"type": "text_delta", "text": p})
		}
		block(obj{"type": "text", "text": ""}, ds)
	}
	for i, c := range t.ToolCalls {
		var ds []obj
		for _, p := range pieces(c.ArgumentsText(), a.split) {
			ds = append(ds, obj{"type": "input_json_delta", "partial_json": p})
		}
		block(obj{"type": "tool_use", "id": a.ids[i], "name": c.Name, "input": obj{}}, ds)
	}
	evs = append(evs,
		newEvent("message_delta", obj{"type": "message_delta",
			"delta": obj{"stop_reason": a.stop, "stop_sequence": nil},
			"usage": obj{"output_tokens": a.usage.OutputTokens}}),
		newEvent("message_stop", obj{"type": "message_stop"}),
	)
	return evs
}

// message renders an answer as the unstreamed message.
func (w anthropicWire) message(t *Turn, a *answer) any {
	content := []any{}
	if t.Thinking != "" {
		content = append(content, obj{"type": "thinking", "thinking": t.Thinking, "signature": signature(t)})
	}
	if t.RedactedThinking != "" {
		content = append(content, obj{"type": "redacted_thinking", "data": t.RedactedThinking})
	}
	if t.Text != "" {
		content = append(content, obj{"type": "text", "text": t.Text})
	}
	for i, c := range t.ToolCalls {
		var in any = json.RawMessage(c.ArgumentsText())
		if !json.Valid([]byte(c.ArgumentsText())) {
			in = c.ArgumentsText() // not representable unstreamed: sent as a string
		}
		content = append(content, obj{"type": "tool_use", "id": a.ids[i], "name": c.Name, "input": in})
	}
	return obj{
		"id": fmt.Sprintf("msg_fake_%d", a.n), "type": "message", "role": "assistant", "model": a.model,
		"content": content, "stop_reason": a.stop, "stop_sequence": nil, "usage": anthropicUsage(a),
	}
}
