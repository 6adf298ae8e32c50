package fakellm

import (
	"fmt"
	"net/http"
	"strings"
)

// openaiWire speaks Chat Completions.
type openaiWire struct{ s *Server }

func (openaiWire) key(r *http.Request) string {
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func (openaiWire) validate(r *http.Request, body []byte) error { return validateOpenAI(body) }

func (openaiWire) errorBody(typ, msg string) any {
	return obj{"error": obj{"message": msg, "type": typ, "param": nil, "code": nil}}
}

// keepAlive is an SSE comment, as OpenRouter and proxies send.
func (openaiWire) keepAlive() string { return ": keep-alive\n\n" }

func (w openaiWire) errorEvent(typ, msg string) event {
	return newEvent("", w.errorBody(typ, msg))
}

// finishReason spells a neutral stop reason as Chat Completions does.
func finishReason(stop string) string {
	switch stop {
	case "end_turn":
		return "stop"
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	}
	return stop
}

// openaiUsage counts cached tokens inside prompt_tokens, as OpenAI does.
func openaiUsage(a *answer) obj {
	prompt := a.usage.InputTokens + a.usage.CacheReadTokens
	return obj{
		"prompt_tokens":         prompt,
		"completion_tokens":     a.usage.OutputTokens,
		"total_tokens":          prompt + a.usage.OutputTokens,
		"prompt_tokens_details": obj{"cached_tokens": a.usage.CacheReadTokens},
	}
}

// events renders an answer as the chunks a server streams: a role chunk,
// reasoning_content deltas, content deltas, tool call deltas (the first of
// each with id, type and name), the finish chunk, a usage chunk when the
// request asked for one, and [DONE].
func (w openaiWire) events(t *Turn, a *answer) []event {
	id := fmt.Sprintf("chatcmpl-fake-%d", a.n)
	chunk := func(delta obj, finish any) event {
		return newEvent("", obj{"id": id, "object": "chat.completion.chunk", "created": 0, "model": a.model,
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}})
	}
	evs := []event{chunk(obj{"role": "assistant", "content": ""}, nil)}
	for _, p := range words(t.Thinking) {
		if a.parts {
			evs = append(evs, chunk(obj{"content": []any{thinkingPart(p)}}, nil))
		} else {
			evs = append(evs, chunk(obj{"reasoning_content": p}, nil))
		}
	}
	for _, p := range words(t.Text) {
		if a.parts {
			evs = append(evs, chunk(obj{"content": []any{obj{"type": "text", "text": p}}}, nil))
		} else {
			evs = append(evs, chunk(obj{"content": p}, nil))
		}
	}
	for i, c := range t.ToolCalls {
		call := func(o obj) event {
			if !a.noIndex {
				o["index"] = i
			}
			return chunk(obj{"tool_calls": []any{o}}, nil)
		}
		evs = append(evs, call(obj{"id": a.ids[i], "type": "function", "function": obj{"name": c.Name, "arguments": ""}}))
		for _, p := range pieces(c.ArgumentsText(), a.split) {
			evs = append(evs, call(obj{"function": obj{"arguments": p}}))
		}
	}
	evs = append(evs, chunk(obj{}, finishReason(a.stop)))
	if a.includeUsage {
		evs = append(evs, newEvent("", obj{"id": id, "object": "chat.completion.chunk", "created": 0, "model": a.model,
			"choices": []any{}, "usage": openaiUsage(a)}))
	}
	return append(evs, event{data: []byte("[DONE]")})
}

// thinkingPart is a content part of thinking, as Mistral sends it: its
// thinking a list of text parts.
func thinkingPart(text string) obj {
	return obj{"type": "thinking", "thinking": []any{obj{"type": "text", "text": text}}}
}

// message renders an answer as the unstreamed completion.
func (w openaiWire) message(t *Turn, a *answer) any {
	msg := obj{"role": "assistant", "content": nil}
	if t.Text != "" {
		msg["content"] = t.Text
	}
	if t.Thinking != "" {
		msg["reasoning_content"] = t.Thinking
	}
	if a.parts && (t.Text != "" || t.Thinking != "") {
		parts := []any{}
		if t.Thinking != "" {
			parts = append(parts, thinkingPart(t.Thinking))
		}
		if t.Text != "" {
			parts = append(parts, obj{"type": "text", "text": t.Text})
		}
		msg["content"] = parts
		delete(msg, "reasoning_content")
	}
	var calls []any
	for i, c := range t.ToolCalls {
		calls = append(calls, obj{"id": a.ids[i], "type": "function", "function": obj{"name": c.Name, "arguments": c.ArgumentsText()}})
	}
	if calls != nil {
		msg["tool_calls"] = calls
	}
	return obj{
		"id": fmt.Sprintf("chatcmpl-fake-%d", a.n), "object": "chat.completion", "created": 0, "model": a.model,
		"choices": []any{obj{"index": 0, "message": msg, "finish_reason": finishReason(a.stop)}},
		"usage":   openaiUsage(a),
	}
}
