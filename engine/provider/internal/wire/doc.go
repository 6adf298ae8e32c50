// Package wire holds what the HTTP provider clients (provider/anthropic and
// provider/openai) share whatever their wire format, so that they fail,
// redact and read streams alike:
//
//   - Client: a client's name, API key, HTTP client, clock and timeouts.
//     Post sends a JSON request, turns a non-2xx answer into a
//     *provider.Error and returns a 2xx one as an Answer watched by the
//     timeouts; ReadAnswer reads a whole unstreamed answer; Fail,
//     TransportError, HTTPError and StreamError build every other error.
//   - Redact, OneLine and ErrorBody: the pieces those errors are made of;
//     RetryableStatus and RetryAfterFromHeader (ParseRetryAfter): whether
//     and when an HTTP answer says to retry.
//   - Reader: a text/event-stream reader, by event (Next) or by data line
//     (NextData).
//   - ToolInput: a tool call's streamed arguments made into its input.
//
// # Errors
//
// Every *provider.Error built here has a one-line message (runs of white
// space, newlines included, folded into one space) of at most MaxMessage
// characters and "..." when it was cut. The API key is replaced by
// "[redacted]" before anything is cut, so that no prefix of it can survive
// the cut: a key never appears in an error, even partially, even when the
// server echoes it.
//
// A non-2xx answer carries its status, the error type and message read from
// its body by ErrorBody (else the body itself, else the status text), and
// the server's wait read by RetryAfterFromHeader. 401 and 403 say
// that the key was refused, or that the server wants one when none is set.
// Retryable is RetryableStatus of the status, or the client's
// RetryableType of the error type: which types are transient is the wire
// format's business, not this package's.
//
// A 2xx answer that is neither an event stream nor JSON (a captive
// portal's login page, a proxy's notice) is not retried: retrying cannot
// turn it into a model's answer. WrongContentType names the URL, the
// status, the content type and the body's first 100 characters, on one
// line with the key redacted, instead of letting the stream reader report
// a stream that "ended early". An answer without a Content-Type is read as
// a stream.
//
// A request that got no answer is Retryable unless the connection was
// refused (nothing listens there); when the context is done, the context's
// error is returned instead, wrapped with the client's name.
//
// # Timeouts
//
// Each request is watched by the three limits of provider.Timeouts, one
// after the other: connect until the HTTP client has a connection (seen
// through net/http/httptrace, so that any *http.Client will do), first-byte
// from then until the first part of the answer, idle between two parts.
// When one expires the request's context is cancelled, and Post, or the
// read of the Answer that was waiting, fails with a Retryable
// *provider.Error of one line that names the timeout, the URL (any password
// in it masked) and the limit:
//
//	local: first-byte timeout: no answer from http://127.0.0.1:8080/v1/chat/completions within 10m0s
//	anthropic: idle timeout: the stream from https://api.anthropic.com/v1/messages stalled for 5m0s
//
// What counts as a part of the answer is the reader's business: the bytes
// of a JSON answer count by themselves, while the reader of an event
// stream calls Answer.Progress for each event that carries the answer, so
// that keep-alive comments and ping events, which a live server may send
// forever, restart nothing. A cancelled context still ends a request with
// the context's error, not a timeout's.
//
// # Event streams
//
// Next follows the server-sent events specification: an event is the
// lines up to a blank line; "event:" names it; "data:" lines are joined
// with "\n"; comments (": ...") and other fields are skipped; one space
// after the colon is dropped; lines may end in CR LF. An event cut short by
// the end of the stream is discarded and io.EOF (or ErrTruncated) returned.
//
// NextData reads the streams of Chat Completions servers (OpenAI,
// llama-server, Ollama), which send one whole message per data: line: it
// returns each data line by itself, trimmed of white space, and returns a
// last line that lacks its newline together with the error, so that the
// caller can accept a final "data: [DONE]" cut short and nothing else.
// ErrTruncated (which is an io.EOF) tells a stream that ended in the middle
// of a line from one that ended cleanly.
package wire
