// Package mock is mecha's built-in deterministic provider: no network, no
// key, the same answer to the same conversation every time. It is named
// "mock" and reports the model "mock-1" unless the request names another.
//
// # Default behaviour
//
// New(nil) answers on its own, enough to drive one small run end to end:
//
//   - while the conversation holds no tool result yet, if a tool named
//     fs_list is offered, it says "Let me look at the workspace." and calls
//     fs_list with {"path":"."}; without fs_list it answers with a sentence
//     quoting the prompt;
//   - when the last user message carries fs_list's result, it summarises
//     it and ends the turn: "The workspace holds 3 entries: a, b, c." Each
//     non-empty line of the result is an entry (or each element of a JSON
//     array of strings or of objects with a "name"); at most 20 are named;
//   - when it carries other tool results, it says how many and ends.
//
// # Scripts
//
// New(script) plays a script instead: the first model call plays the first
// turn, the second call the second, and so on. A call beyond the last turn
// fails with a *provider.Error saying the script is exhausted. LoadScript
// reads a script from a JSON file; unknown fields are refused.
//
//	{"turns": [
//	  {"text": "Let me read it.",
//	   "tool_calls": [{"name": "fs_read", "input": {"path": "go.mod"}}]},
//	  {"error": {"status": 529, "type": "overloaded_error",
//	             "message": "Overloaded", "retryable": true, "retry_after_ms": 10}},
//	  {"thinking": "The module line names it.",
//	   "text": "The module is github.com/example/x.",
//	   "usage": {"input_tokens": 120, "output_tokens": 9,
//	             "cache_read_tokens": 0, "cache_write_tokens": 0},
//	   "stop_reason": "end_turn", "model": "mock-2"}
//	]}
//
// A turn's fields:
//
//	text         the answer's text block, if not empty
//	thinking     a thinking block (signed "mock"), placed first
//	tool_calls   tool_use blocks, in order: name, input (a JSON object, {}
//	             when absent) and optionally id; a missing id is call_N,
//	             where N counts the tool calls in the conversation so far,
//	             this one included, so ids are stable across runs and
//	             unique within a conversation
//	usage        the token counts to report; when absent, input_tokens is a
//	             quarter of the bytes of the system prompt, tools and
//	             conversation as JSON, and output_tokens a quarter of the
//	             bytes produced (each at least 1)
//	stop_reason  end_turn, tool_use, max_tokens or other; by default
//	             tool_use when the turn calls tools, end_turn otherwise
//	model        the model reported as having answered
//	error        instead of an answer, fail with a *provider.Error of this
//	             status, type, message, retryable flag and retry-after
//
// Usage in the default behaviour is derived from byte counts the same way.
// Text and thinking are passed to Request.OnDelta whole, one delta each.
package mock
