// Package anthropic is a client for the Anthropic Messages API, written on
// net/http. It always streams (POST {base}/v1/messages with "stream":true)
// and assembles the server-sent events into a provider.Response.
//
// # Request
//
// The system prompt goes in "system"; tools as {name, description,
// input_schema}; messages as content blocks of type text, tool_use,
// tool_result (content as a string, is_error when set) and thinking (with
// its signature). Blocks kept verbatim in a transcript (redacted_thinking)
// are sent back verbatim. The client adapts a conversation the API would
// refuse rather than failing: empty text blocks and thinking blocks without
// a signature (written by another provider) are dropped, messages left empty
// are dropped, neighbouring messages of the same role are merged, and a tool
// call input that is not a JSON object is sent as {}.
//
// max_tokens is Request.MaxTokens, or DefaultMaxTokens when unset.
// temperature is sent only when set; the API refuses a temperature other
// than 1 together with thinking, and the client passes that refusal on
// rather than silently dropping a setting the transcript records as sent.
// The API has no seed: Request.Seed is ignored. Unsent names it, and
// Request.Effort without Thinking, so that the config record holds null
// for them.
//
// With Request.Thinking, the request carries
// "thinking":{"type":"enabled","budget_tokens":N} where N is ThinkingBudget
// of Request.Effort: 2048 for low, 8192 for medium or unset, 24576 for high.
// The API requires max_tokens above the budget, so when MaxTokens is not,
// the budget is added to it: the visible answer keeps its whole allowance.
// Without Thinking, Effort has no effect.
//
// With Request.CachePrompt, cache_control {"type":"ephemeral"} marks three
// breakpoints: the system prompt (then sent as one text block), the last
// tool, and the last content block of the last user message.
//
// # Response
//
// Events handled: message_start (model and input, cache_creation_input and
// cache_read_input token counts), content_block_start (text, tool_use,
// thinking; any other block type, such as redacted_thinking, is kept
// verbatim), content_block_delta (text_delta, input_json_delta accumulated
// per block index, thinking_delta, signature_delta, citations_delta),
// content_block_stop,
// message_delta (stop_reason and cumulative usage), message_stop, ping, and
// error. Text and thinking deltas are passed to Request.OnDelta as they come.
//
// A block kept verbatim whose input streams (server_tool_use of web search,
// web fetch, code execution and tool search, mcp_tool_use of the MCP
// connector) starts with "input":{}; at content_block_stop the input
// accumulated from its input_json_delta events takes that place, the
// block's other fields kept as they came, so that the block is recorded,
// and sent back on a resume or a paused turn's continuation, with what the
// model asked for. Their results (web_search_tool_result, mcp_tool_result,
// ...) arrive whole and are kept as they came.
//
// A text block's citations (its content_block_start's "citations", and one
// more with each citations_delta) are kept on the block as the API gave
// them, recorded, and sent back with the block. The API splits a sentence
// into text blocks where a citation starts and ends; the answer's text
// (transcript.TextOf) joins such blocks as they are.
//
// Usage maps input_tokens, output_tokens, cache_read_input_tokens (to
// CacheReadTokens) and cache_creation_input_tokens (to CacheWriteTokens).
// stop_reason end_turn, tool_use, max_tokens and pause_turn map to the
// provider.Stop* constants, anything else to provider.StopOther; the API's
// own word (stop_sequence, refusal, ...) is Response.NativeStopReason,
// which the transcript records.
//
// A tool call whose streamed input is not valid JSON does not fail the
// turn: its input becomes the text as a JSON string, so the tool rejects it
// and the model sees why.
//
// # Errors
//
// Every failure is a *provider.Error with a one-line message of at most
// about 300 characters, in which the API key is replaced by "[redacted]"
// even when the server echoed it. A non-2xx answer carries the status, the
// body's error.type and error.message, and the retry-after header; 429,
// 5xx (529 included) and overloaded_error are Retryable, and 401/403 say the
// key was refused. An error event mid-stream carries its type
// (overloaded_error, api_error and rate_limit_error are Retryable). A stream
// that ends before message_stop is "stream ended early" and Retryable; a
// malformed event is not. A refused connection is not Retryable; other
// transport failures are. A cancelled context returns the context's error.
package anthropic
