// Package fakellm is a fake model server for tests. It listens on a
// loopback address only, speaks both the Anthropic Messages wire and the
// OpenAI Chat Completions wire, and answers from a script of turns, with
// the faults real servers produce: rate limits, overloads, cut streams,
// malformed events, errors mid-stream. It records every request it gets,
// and refuses (400) requests a real server would refuse.
//
// # Endpoints
//
//	POST /v1/messages          Anthropic: SSE when "stream":true, JSON otherwise
//	POST /v1/chat/completions  OpenAI: SSE when "stream":true, JSON otherwise
//	GET  /props                {"total_slots":N}, as llama-server reports it
//	GET  /health               {"status":"ok"}
//	GET  /v1/models            one model, "fakellm"
//
// # Script
//
// The server plays a script of turns in the format described once in
// package turnscript (engine/provider/turnscript), the one the mock
// provider reads: answers, HTTP errors and stream faults. LoadScript and
// ParseScript refuse unknown fields and the one field the server does not
// play (the mock provider's error; a failure here is a status, a body or a
// fault).
//
// Every model request (POST to either endpoint) consumes the next turn, in
// order, whichever endpoint it reaches; so "429 then the same request
// succeeds" is a fault turn followed by an answer turn. A request refused
// for its key (401) or its shape (400) consumes no turn. A request beyond
// the last turn is answered 400 with "fakellm: script exhausted: ...".
//
// A test expects the whole script to be played, like an HTTP fake that
// fails on unused stubs: Verify reports the turns not played and the model
// requests that came after the last turn, New fails the test with it when
// the test ends, and the command exits 1 with it. A test whose client stops
// early on purpose (a replay that stops at a divergence) gives the fake only
// the turns it will ask for.
//
// How the server renders an answer on each wire:
//
//	text         streamed in deltas split at spaces
//	thinking     a thinking block with a signature_delta (Anthropic) or
//	             reasoning_content deltas (OpenAI; with ContentParts, as
//	             Mistral sends it, delta.content lists of thinking parts,
//	             and text as lists of text parts); signature and
//	             redacted_thinking are Anthropic only
//	tool_calls   several are parallel calls; a missing id is toolu_fake_N
//	             or call_fake_N, N counting calls across the server's life
//	usage        estimated in from the request body's bytes. OpenAI gets
//	             prompt_tokens = input + cache_read and
//	             prompt_tokens_details.cached_tokens = cache_read, and no
//	             cache writes; the usage chunk is sent only when the
//	             request asked for it in stream_options
//	stop_reason  OpenAI spells end_turn, tool_use and max_tokens as stop,
//	             tool_calls and length
//
// A turn that hangs is recorded with status 0.
//
// # Checks
//
// Anthropic: the anthropic-version header; model; max_tokens; a non-empty
// messages array that starts with user and alternates user/assistant;
// known block types, non-empty text, tool_use and thinking (with a
// signature) only from the assistant, tool_result only from the user;
// server-side tool blocks (server_tool_use and mcp_tool_use with an id, a
// name and an object input, mcp_tool_use with its server_name, and their
// *_tool_result blocks, each answering one before it in the same message)
// only from the assistant; every
// tool_result answering a tool_use of the previous message and every
// tool_use answered by the next one; tools with unique names and an object
// input_schema; a thinking budget of at least 1024 and below max_tokens,
// and no temperature other than 1 with thinking; at most 4 cache_control
// breakpoints. OpenAI: model; non-empty messages with known roles; tool
// calls with id, type function, a name and arguments as a string; every
// tool message answering a pending call of the preceding assistant message
// and every call answered before the next message; tools of type function;
// stream_options only with stream; not both max_tokens and
// max_completion_tokens. When Options.APIKey is set, a request without
// that key (x-api-key, or Authorization: Bearer) is answered 401 with the
// key it presented echoed in the message.
//
// # Recording
//
// Requests returns every request received (method, path, headers, body,
// the status answered and the turn consumed). With Options.LogPath (-log)
// each is also appended to a file as one JSON line, headers lower-cased:
//
//	{"method":"POST","path":"/v1/chat/completions","body":{...,"seed":42,"cache_prompt":true},"status":200,"turn":1,"headers":{"content-type":"application/json"}}
//
// # Command
//
// Main is the fakellm command, for tests that run it in the background (a
// testscript command, say):
//
//	fakellm -script FILE [-addr 127.0.0.1:0] [-url-file FILE] [-log FILE]
//	        [-slots N] [-no-index] [-split N] [-content-parts] [-key KEY]
//
// It prints the base URL (http://127.0.0.1:PORT, without /v1) on stdout,
// writes it with no newline to -url-file through a rename (a reader sees
// the whole URL or no file), and serves until SIGINT or SIGTERM. It then
// exits 1, with one line on stderr, when the script was not played exactly
// (as Verify reports it), so that a testscript's "wait" on it fails.
package fakellm
