package provider

import "time"

// Timeout defaults of the HTTP providers, used when the matching Timeouts
// field is zero.
//
// Connect is generous for a handshake yet short enough that a dead address
// is reported while someone still watches. FirstByte is long because it
// includes reading the prompt: a local model on a CPU, or a cold Ollama
// loading its weights, can take minutes before its first token on a long
// context. Idle is shorter: once a model streams, minutes without a single
// token mean a stalled server, not a slow one.
const (
	DefaultConnectTimeout   = 30 * time.Second
	DefaultFirstByteTimeout = 10 * time.Minute
	DefaultIdleTimeout      = 5 * time.Minute
)

// Timeouts bound how long an HTTP provider waits on its server. Nothing
// bounds a whole request: an answer that keeps coming is never cut. A zero
// field means its default; a negative one, no limit.
//
// Each bounds a silence, and what ends it is progress: a part of the answer
// itself. A response's status and headers, a server-sent comment
// (": keep-alive"), Anthropic's ping events and empty data lines carry no
// part of the answer, so a server that accepts the request and then only
// keeps the connection alive times out like one that sends nothing.
type Timeouts struct {
	// Connect bounds the making of a connection (name lookup, TCP and TLS
	// handshakes) until the request can be sent on it.
	Connect time.Duration
	// FirstByte bounds the wait, from the connection, for the first part of
	// the answer: the first event of a stream, the first byte of a whole
	// JSON answer.
	FirstByte time.Duration
	// Idle bounds the wait for each further part once the answer began.
	Idle time.Duration
}

// WithDefaults returns t with each zero field set to its default.
func (t Timeouts) WithDefaults() Timeouts {
	if t.Connect == 0 {
		t.Connect = DefaultConnectTimeout
	}
	if t.FirstByte == 0 {
		t.FirstByte = DefaultFirstByteTimeout
	}
	if t.Idle == 0 {
		t.Idle = DefaultIdleTimeout
	}
	return t
}
