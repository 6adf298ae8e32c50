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
// New(script) plays a script instead, in the format described once in
// package turnscript (LoadScript and ParseScript read it, refusing unknown
// fields and the fields the mock does not play: the fake server's
// signature, redacted_thinking, tool_calls[].arguments and HTTP faults,
// and stop reasons other than end_turn, tool_use, max_tokens, pause_turn
// and other).
// A call beyond the last turn fails with a *provider.Error saying the
// script is exhausted. How the mock renders a turn:
//
//   - thinking becomes a thinking block signed "mock";
//   - a missing tool call id is call_N, where N counts the tool calls in
//     the conversation so far, this one included, so ids are stable
//     across runs and unique within a conversation;
//   - the bytes a usage estimate counts in are those of the system
//     prompt, the tools and the conversation as JSON;
//   - error fails the call with the *provider.Error it describes.
//
// Usage in the default behaviour is estimated the same way. Text and
// thinking are passed to Request.OnDelta whole, one delta each.
package mock
