package fakellm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/record/transcript"
)

// wire is one of the two formats the server speaks.
type wire interface {
	// key returns the API key the request carries.
	key(r *http.Request) string
	// validate checks the request's headers and body; its error is the
	// message of a 400 answer.
	validate(r *http.Request, body []byte) error
	errorBody(typ, msg string) any
	errorEvent(typ, msg string) event
	// keepAlive is what the wire's servers send to keep an idle stream
	// open: no part of the answer.
	keepAlive() string
	events(t *Turn, a *answer) []event
	message(t *Turn, a *answer) any
}

// event is one server-sent event; name is empty for data-only events.
type event struct {
	name string
	data []byte
}

func newEvent(name string, v any) event {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps and slices of plain values are rendered
	}
	return event{name: name, data: b}
}

// answer is what is resolved about a turn when it is played.
type answer struct {
	model        string
	ids          []string // one per tool call
	usage        transcript.Usage
	stop         string // neutral: end_turn, tool_use, max_tokens ...
	includeUsage bool   // OpenAI: stream_options.include_usage
	split        int
	noIndex      bool
	parts        bool // OpenAI content as lists of parts
	n            int  // the turn's number
}

// serveModel answers a model request with the next turn.
func (s *Server) serveModel(w http.ResponseWriter, r *http.Request, body []byte, wr wire) {
	key := wr.key(r)
	if s.opts.APIKey != "" && key != s.opts.APIKey {
		s.record(r, body, http.StatusUnauthorized, 0)
		writeJSON(w, http.StatusUnauthorized, wr.errorBody("authentication_error", "fakellm: invalid API key: "+key))
		return
	}
	if err := wr.validate(r, body); err != nil {
		s.record(r, body, http.StatusBadRequest, 0)
		writeJSON(w, http.StatusBadRequest, wr.errorBody("invalid_request_error", "fakellm: "+err.Error()))
		return
	}
	var req struct {
		Model         string `json:"model"`
		Stream        bool   `json:"stream"`
		StreamOptions *struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	json.Unmarshal(body, &req) // validate has parsed it already
	t, n, ok := s.next(r)
	if !ok {
		s.record(r, body, http.StatusBadRequest, 0)
		msg := fmt.Sprintf("fakellm: script exhausted: this is model request %d and the script has %d turns", n, len(s.script.Turns))
		writeJSON(w, http.StatusBadRequest, wr.errorBody("invalid_request_error", msg))
		return
	}
	status := http.StatusOK
	switch {
	case t.Status != 0:
		status = t.Status
	case t.Hang:
		status = 0 // nothing is ever sent
	}
	s.record(r, body, status, n)
	if t.Hang {
		<-r.Context().Done()
		return
	}
	if t.DelayMS > 0 {
		select {
		case <-time.After(time.Duration(t.DelayMS) * time.Millisecond):
		case <-r.Context().Done():
			return
		}
	}
	if t.Status != 0 || t.Body != "" {
		s.writeFault(w, t, wr, key)
		return
	}
	a := &answer{model: t.Model, usage: t.UsageFor(len(body)), stop: t.Stop(), split: s.opts.SplitArgs, noIndex: s.opts.NoIndex, parts: s.opts.ContentParts, n: n}
	if a.model == "" {
		a.model = req.Model
	}
	a.includeUsage = req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	prefix := "toolu_fake_"
	if _, isOpenAI := wr.(openaiWire); isOpenAI {
		prefix = "call_fake_"
	}
	for _, c := range t.ToolCalls {
		id := c.ID
		if id == "" {
			id = s.newID(prefix)
		}
		a.ids = append(a.ids, id)
	}
	if req.Stream {
		s.stream(r.Context(), w, t, wr, wr.events(t, a), key)
	} else {
		s.whole(r.Context(), w, t, wr, wr.message(t, a), key)
	}
}

// writeFault answers with the turn's HTTP error, or its raw body.
func (s *Server) writeFault(w http.ResponseWriter, t *Turn, wr wire, key string) {
	if t.RetryAfter != "" {
		w.Header().Set("Retry-After", t.RetryAfter)
	}
	if t.Body != "" {
		ct, status := t.ContentType, t.Status
		if ct == "" {
			ct = "application/json"
		}
		if status == 0 {
			status = http.StatusOK
		}
		w.Header().Set("Content-Type", ct)
		w.WriteHeader(status)
		w.Write([]byte(t.Body))
		return
	}
	writeJSON(w, t.Status, wr.errorBody(errorType(t.Status, t.ErrorType), faultMessage(t.ErrorMessage, http.StatusText(t.Status), t.EchoKey, key)))
}

func faultMessage(msg, fallback string, echo bool, key string) string {
	if msg == "" {
		msg = fallback
	}
	if echo {
		msg += " (your key: " + key + ")"
	}
	return msg
}

// errorType is the type sent with an error of the given status when the
// script names none.
func errorType(status int, typ string) string {
	switch {
	case typ != "":
		return typ
	case status == 401:
		return "authentication_error"
	case status == 403:
		return "permission_error"
	case status == 404:
		return "not_found_error"
	case status == 429:
		return "rate_limit_error"
	case status == 529 || status == 503:
		return "overloaded_error"
	case status >= 500:
		return "api_error"
	}
	return "invalid_request_error"
}

// keepAliveEvery is how often ping_after sends a keep-alive.
const keepAliveEvery = 20 * time.Millisecond

// stream sends events, applying the turn's stream fault.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, t *Turn, wr wire, events []event, key string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	at := func(p *int, i int) bool { return p != nil && *p == i }
	for i := 0; ; i++ {
		switch {
		case at(t.CutAfter, i):
			return // a clean end, without the terminal event
		case at(t.PingAfter, i):
			for {
				w.Write([]byte(wr.keepAlive()))
				flush()
				select {
				case <-time.After(keepAliveEvery):
				case <-ctx.Done():
					return
				}
			}
		case at(t.DropAfter, i):
			flush()
			panic(http.ErrAbortHandler) // the connection is cut
		case at(t.MalformedAfter, i):
			ev := event{data: []byte(`{"type":`)}
			if i < len(events) {
				ev = events[i]
				ev.data = ev.data[:len(ev.data)/2]
			}
			writeEvent(w, ev)
			return
		case t.StreamError != nil && t.StreamError.After == i:
			writeEvent(w, wr.errorEvent(errorType(500, t.StreamError.Type), faultMessage(t.StreamError.Message, "stream error", t.EchoKey, key)))
			return
		case i >= len(events):
			return
		}
		writeEvent(w, events[i])
		flush()
	}
}

func writeEvent(w http.ResponseWriter, ev event) {
	var b strings.Builder
	if ev.name != "" {
		b.WriteString("event: " + ev.name + "\n")
	}
	b.WriteString("data: ")
	b.Write(ev.data)
	b.WriteString("\n\n")
	w.Write([]byte(b.String()))
}

// whole sends an unstreamed answer. A stream fault truncates the body (and
// drop_after cuts the connection too); stream_error becomes a 500;
// ping_after sends the headers and then nothing.
func (s *Server) whole(ctx context.Context, w http.ResponseWriter, t *Turn, wr wire, v any, key string) {
	if t.PingAfter != nil {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		<-ctx.Done()
		return
	}
	if e := t.StreamError; e != nil {
		writeJSON(w, http.StatusInternalServerError, wr.errorBody(errorType(500, e.Type), faultMessage(e.Message, "stream error", t.EchoKey, key)))
		return
	}
	b, _ := json.Marshal(v)
	if t.CutAfter == nil && t.DropAfter == nil && t.MalformedAfter == nil {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(b[:len(b)/2])
	if t.DropAfter != nil {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		panic(http.ErrAbortHandler)
	}
}

// pieces splits s into pieces of at most n characters; n <= 0 means one piece.
func pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return []string{s}
	}
	var out []string
	r := []rune(s)
	for len(r) > n {
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return append(out, string(r))
}

// words splits text into deltas at spaces, as a model streams tokens.
func words(s string) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, w := range strings.SplitAfter(s, " ") {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}
