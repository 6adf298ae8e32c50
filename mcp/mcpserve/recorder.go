package mcpserve

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Recorder writes one MCP server or proxy run as a mecha session. It is
// safe for concurrent use: calls are answered concurrently.
type Recorder struct {
	// Store is where the session is created.
	Store *session.Store
	// Meta is the session's header; Start fills in the client.
	Meta transcript.Meta
	// Config is written after the header; nil writes none until
	// SetConfig gives one.
	Config *transcript.Config
	// Warn gets the one line saying recording stopped (nil: nowhere).
	Warn io.Writer
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu      sync.Mutex
	w       *session.Writer
	ref     session.Ref
	err     error // the first failure; recording has stopped
	started bool
	calls   int // tool_call_start records numbered so far
}

func (r *Recorder) now() time.Time {
	if r.Now != nil {
		return r.Now().UTC()
	}
	return time.Now().UTC()
}

// Start creates the session, naming the client, and writes the config. A
// second Start (a second client of an HTTP server) writes the config again,
// as an attach.
func (r *Recorder) Start(client transcript.MCPPeer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return
	}
	if r.w == nil {
		m := r.Meta
		m.MCPClient = &client
		w, err := r.Store.Create(m)
		if err != nil {
			r.failLocked(err)
			return
		}
		r.w, r.ref = w, w.Ref()
	}
	r.started = true
	if r.Config != nil {
		c := *r.Config
		c.At = r.now()
		r.appendLocked(&c)
	}
}

// Started reports whether Start was called.
func (r *Recorder) Started() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.started
}

// SetConfig sets the config record and, once the session was started,
// writes it (a proxy learns its upstream's identity when it connects).
func (r *Recorder) SetConfig(c transcript.Config) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Config = &c
	if r.w != nil && r.err == nil {
		c.At = r.now()
		r.appendLocked(&c)
	}
}

// Arrived appends a tool_call_start record, numbering the call, and
// returns its number for the tool_call that records its answer. It starts
// the session first as Record does, and never fails: see Err.
func (r *Recorder) Arrived(c *transcript.ToolCallStart) int {
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if !started {
		r.Start(transcript.MCPPeer{})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	c.Call = r.calls
	if r.err != nil || r.w == nil {
		return c.Call
	}
	if c.At.IsZero() {
		c.At = r.now()
	}
	r.appendLocked(c)
	return c.Call
}

// Record appends a tool_call record. It starts the session first when no
// client initialized (a client that skipped initialize still has its
// calls recorded). It never returns an error: see Err.
func (r *Recorder) Record(c *transcript.ToolCall) {
	r.mu.Lock()
	started := r.started
	r.mu.Unlock()
	if !started {
		r.Start(transcript.MCPPeer{})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil || r.w == nil {
		return
	}
	if c.At.IsZero() {
		c.At = r.now()
	}
	r.appendLocked(c)
}

func (r *Recorder) appendLocked(rec transcript.Record) {
	if err := r.w.Append(rec); err != nil {
		r.failLocked(err)
	}
}

// failLocked keeps the first failure and says so once.
func (r *Recorder) failLocked(err error) {
	if r.err != nil {
		return
	}
	r.err = err
	if r.Warn != nil {
		fmt.Fprintf(r.Warn, "mecha: recording stopped, calls are still answered: %v\n", err)
	}
}

// Err returns the failure that stopped recording, nil while recording.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// ID returns the session id, "" before the session was created.
func (r *Recorder) ID() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ref.ID
}

// Close ends the session with a summary record. When recording stopped,
// the summary says so, written through a fresh writer in case the file
// takes it now (a disk that was full may have room again); if it does not,
// the stderr line was the only word.
func (r *Recorder) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		return nil
	}
	none := 0 // a server's session has no model turns: listing reads it from the tail
	sum := &transcript.Summary{Provider: r.Meta.Provider, StopReason: "closed", At: r.now(), SessionTurns: &none}
	if r.err == nil {
		r.appendLocked(sum)
		if err := r.w.Close(); err != nil {
			r.failLocked(err)
		}
		r.w = nil
		return r.err
	}
	r.w.Close()
	r.w = nil
	sum.StopReason = transcript.StopRecordingStopped
	sum.Error = "recording stopped: " + r.err.Error()
	if w, err := r.Store.OpenWriter(r.ref); err == nil {
		_ = w.Append(sum) // best-effort: stderr has already said it
		w.Close()
	}
	return r.err
}
