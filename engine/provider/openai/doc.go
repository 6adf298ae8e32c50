// Package openai is a client for Chat Completions endpoints, written on
// net/http: OpenAI itself, and OpenAI-compatible local servers such as
// llama-server and Ollama. It always streams (POST {base}/v1/chat/completions
// with "stream":true and "stream_options":{"include_usage":true}; a base
// that already ends in /v1 is not given a second one) and assembles the
// data: chunks into a provider.Response.
//
// # Flavours
//
// Options.Name picks one of two flavours:
//
//	openai  key required (Authorization: Bearer), base https://api.openai.com,
//	        default model gpt-5-mini; the token limit is sent as
//	        max_completion_tokens, the only spelling reasoning models accept.
//	local   llama-server, Ollama ...: no key needed (sent when given), base
//	        http://127.0.0.1:8080, default model "local"; the token limit is
//	        sent as max_tokens, which every local server understands, and
//	        "cache_prompt" is always sent with Request.CachePrompt's value.
//
// # Request
//
// The system prompt is the first message. An assistant message carries its
// text (joined) and its tool calls as tool_calls with the input as a JSON
// string in function.arguments; its content is null when it only calls
// tools. Each tool_result block becomes a "tool" message with its
// tool_call_id, placed before any text of the same user message; a result
// marked is_error has its content prefixed with "error: " since the wire
// has no flag for it. Thinking blocks and blocks kept verbatim have no slot
// on this wire and are dropped. Tools are sent as
// {"type":"function","function":{name,description,parameters}}.
//
// temperature and seed are sent only when set; reasoning_effort only when
// Request.Effort is set. Request.Thinking has no wire form here: reasoning
// models reason on their own, and Effort steers them. Unsent names what a
// flavour does not send (thinking; cache_prompt but to local), so that the
// config record holds null for it.
//
// # Response
//
// Text deltas (content) and reasoning deltas (reasoning_content, as
// llama-server sends them, or reasoning, as Ollama does) are passed to
// Request.OnDelta as they come; reasoning is kept as a thinking block, which
// comes first in the response, then the text, then the tool calls. content
// may also be a list of parts, as Mistral's reasoning models send it (in
// deltas and in a whole message): a text part's text is text, a thinking
// part's thinking (a string, or a list of text parts) is reasoning, and
// parts of other types (a reference, an image) are skipped and counted in
// Response.Skipped, which the loop notes on its log. A refusal (OpenAI
// sends the model's refusal in "refusal" instead of "content") is the
// answer's text.
//
// Tool calls are assembled from their deltas keyed by index. Servers that
// omit index (llama.cpp, some Ollama versions) are handled too: a delta with
// a new id starts a new call, a delta without an id continues the last one.
// A call the server gave no id is named call_N by its position. Arguments
// that are not valid JSON do not fail the turn: the input becomes the text
// as a JSON string, so the tool rejects it and the model sees why (and the
// same text goes back in function.arguments on the next request).
//
// finish_reason stop maps to end_turn (tool_use if the turn called tools),
// tool_calls to tool_use, length to max_tokens, anything else to other;
// finish_reason itself, as sent (content_filter, ...), is
// Response.NativeStopReason, which the transcript records.
//
// Usage is read from the chunk that carries it (the last one). OpenAI counts
// cached tokens inside prompt_tokens; so that pricing is right,
// InputTokens is the uncached part, prompt_tokens minus
// prompt_tokens_details.cached_tokens, and CacheReadTokens the cached part.
// This wire reports no cache writes.
//
// # Errors
//
// Every failure is a *provider.Error with a one-line message of at most
// about 300 characters, in which the API key is replaced by "[redacted]"
// even when the server echoed it. A non-2xx answer carries the status, the
// body's error.type and error.message (or Ollama's error string), and
// retry-after-ms or retry-after; 429 and 5xx are Retryable, and 401/403 say
// the key was refused. A chunk carrying "error" mid-stream becomes an error
// of its type. The stream must end with data: [DONE]; a server that omits it
// is accepted only if it sent both a finish_reason and the usage, and any
// other early end is "stream ended early" and Retryable. A malformed chunk
// is not Retryable. A refused connection is not Retryable; other transport
// failures are. A cancelled context returns the context's error.
package openai
