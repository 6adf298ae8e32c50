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
// A script is a JSON file (read by LoadScript; unknown fields are refused):
//
//	{"turns": [
//	  {"status": 429, "retry_after": "1"},
//	  {"text": "Let me look.", "tool_calls": [
//	     {"name": "fs_list", "input": {"path": "."}},
//	     {"name": "fs_read", "input": {"path": "go.mod"}}]},
//	  {"thinking": "The listing shows...", "text": "Two files.",
//	   "usage": {"input_tokens": 100, "output_tokens": 12,
//	             "cache_read_tokens": 80, "cache_write_tokens": 20}},
//	  {"text": "This answer is cut", "cut_after": 4}
//	]}
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
// The answer fields use the same vocabulary as the mock provider's scripts:
//
//	text               the text, streamed in deltas split at spaces
//	thinking           a thinking block (Anthropic, with a signature_delta)
//	                   or reasoning_content deltas (OpenAI)
//	signature          the thinking block's signature (default
//	                   "fakellm-signature"); Anthropic only
//	redacted_thinking  the data of a redacted_thinking block; Anthropic only
//	tool_calls         [{id, name, input, arguments}]; several are parallel
//	                   calls. A missing id is generated: toolu_fake_N or
//	                   call_fake_N, N counting calls across the server's life.
//	                   arguments, when set, is sent verbatim instead of input
//	                   (to send arguments that are not valid JSON).
//	usage              {input_tokens, output_tokens, cache_read_tokens,
//	                   cache_write_tokens}; by default a quarter of the
//	                   request's bytes in and of the answer's bytes out.
//	                   OpenAI gets prompt_tokens = input + cache_read and
//	                   prompt_tokens_details.cached_tokens = cache_read, and
//	                   no cache writes; the usage chunk is sent only when
//	                   the request asked for it in stream_options.
//	stop_reason        end_turn, tool_use, max_tokens or any other string;
//	                   by default tool_use with tool calls, else end_turn.
//	                   OpenAI spells them stop, tool_calls, length.
//	model              the model reported; by default the request's
//
// The fault fields:
//
//	status         answer with this HTTP status (400-599) instead, with an
//	               error body in the endpoint's format:
//	error_type     its error.type (by default from the status:
//	               rate_limit_error, overloaded_error for 503 and 529,
//	               api_error, authentication_error, invalid_request_error)
//	error_message  its error.message (by default the status text)
//	body           a raw body sent instead of the generated one; without
//	               status, a 200 answer of that body
//	content_type   the body's Content-Type (default application/json):
//	               {"body": "<html>...", "content_type": "text/html"} is
//	               a captive portal's login page
//	retry_after    the retry-after header's value (seconds or a date)
//	echo_key       append the key the request carried to the message
//	               (also for stream_error), to test redaction
//	cut_after      N: end the stream cleanly after N events, without the
//	               terminal event (message_stop or [DONE])
//	drop_after     N: cut the connection after N events
//	malformed_after N: send the first half of event N (a broken JSON
//	               event), then end
//	stream_error   {after, type, message}: send an error event after N
//	               events (Anthropic: event: error; OpenAI: data:
//	               {"error":{...}}), then end
//	ping_after     N: send N events, then only keep-alives every 20 ms
//	               until the client goes away (Anthropic: ping events;
//	               OpenAI: ": keep-alive" comments): a server alive but
//	               never done
//	hang           accept the request and never answer, not even a
//	               status line, until the client goes away (recorded
//	               with status 0)
//	delay_ms       wait before answering
//
// Events are counted from 0 and include the first (message_start, or the
// role chunk) and Anthropic's ping. In an unstreamed request cut_after,
// drop_after and malformed_after send half of the JSON body (drop_after
// then cuts the connection), stream_error becomes an HTTP 500 and
// ping_after sends the headers and then nothing.
//
// # Checks
//
// Anthropic: the anthropic-version header; model; max_tokens; a non-empty
// messages array that starts with user and alternates user/assistant;
// known block types, non-empty text, tool_use and thinking (with a
// signature) only from the assistant, tool_result only from the user; every
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
//	        [-slots N] [-no-index] [-split N] [-key KEY]
//
// It prints the base URL (http://127.0.0.1:PORT, without /v1) on stdout,
// writes it with no newline to -url-file through a rename (a reader sees
// the whole URL or no file), and serves until SIGINT or SIGTERM. It then
// exits 1, with one line on stderr, when the script was not played exactly
// (as Verify reports it), so that a testscript's "wait" on it fails.
package fakellm
