package fakellm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

// Options configures a Server.
type Options struct {
	// Addr is the address to listen on; it must be a loopback address.
	// Empty means 127.0.0.1:0 (any free port).
	Addr string
	// Slots is what GET /props reports as total_slots. Zero means 1.
	Slots int
	// NoIndex omits "index" from OpenAI tool call deltas, as llama.cpp and
	// some Ollama versions do.
	NoIndex bool
	// SplitArgs, when positive, splits tool arguments into deltas of at most
	// that many characters; zero sends each call's arguments in one delta.
	SplitArgs int
	// ContentParts sends OpenAI content as Mistral's reasoning models do:
	// thinking as delta.content lists of thinking parts (each a list of
	// text parts), text as lists of text parts, and an unstreamed
	// message's content as such a list.
	ContentParts bool
	// APIKey, when set, is required: x-api-key on /v1/messages, a bearer
	// token on /v1/chat/completions. A wrong key is answered 401 with the
	// key it presented echoed in the message.
	APIKey string
	// LogPath, when set, is a file every request is appended to, one JSON
	// line each.
	LogPath string
}

// Request is a request the server received.
type Request struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Header http.Header     `json:"-"`
	Body   json.RawMessage `json:"body,omitempty"` // compacted; a JSON string when the body was not JSON
	// Status is the status the server answered (or began to answer) with,
	// 0 when it never answered (hang).
	Status int `json:"status"`
	// Turn is the 1-based script turn the request consumed, 0 for none.
	Turn int `json:"turn"`
}

// Server is a fake model server on a loopback address.
type Server struct {
	opts   Options
	script *Script
	ln     net.Listener
	srv    *http.Server
	url    string

	mu     sync.Mutex
	played int
	late   []string // the model requests that came after the last turn
	ids    int
	reqs   []Request
	log    *os.File
}

// TB is the part of testing.TB that New uses.
type TB interface {
	Helper()
	Cleanup(func())
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// New starts a server playing script for the test t, and stops it when the
// test ends. The test fails then, through t.Errorf, when the script was not
// played exactly (see Verify), as an HTTP fake with unused stubs fails. A
// nil script has no turns.
func New(t TB, script *Script, opts Options) *Server {
	t.Helper()
	s, err := Start(script, opts)
	if err != nil {
		t.Fatalf("%v", err)
		return nil
	}
	t.Cleanup(func() {
		t.Helper()
		s.Close()
		if err := s.Verify(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return s
}

// Start starts a server playing script.
func Start(script *Script, opts Options) (*Server, error) {
	if script == nil {
		script = &Script{}
	}
	if opts.Addr == "" {
		opts.Addr = "127.0.0.1:0"
	}
	if opts.Slots <= 0 {
		opts.Slots = 1
	}
	s := &Server{opts: opts, script: script}
	if opts.LogPath != "" {
		f, err := os.OpenFile(opts.LogPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, fmt.Errorf("fakellm: %w", err)
		}
		s.log = f
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		s.closeLog()
		return nil, fmt.Errorf("fakellm: %w", err)
	}
	if a, ok := ln.Addr().(*net.TCPAddr); !ok || !a.IP.IsLoopback() {
		ln.Close()
		s.closeLog()
		return nil, fmt.Errorf("fakellm: %s is not a loopback address", opts.Addr)
	}
	s.ln = ln
	s.url = "http://" + ln.Addr().String()
	s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln)
	return s, nil
}

// URL returns the server's base URL, http://127.0.0.1:PORT, without /v1.
func (s *Server) URL() string { return s.url }

// Verify reports, in one line, whether the script was played exactly: an
// error names the turns not played or the model requests that came after
// the last turn was played. Call it after Close, or when the client is
// done.
func (s *Server) Verify() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var probs []string
	if n := len(s.script.Turns); s.played < n {
		if s.played+1 == n {
			probs = append(probs, fmt.Sprintf("turn %d of %d was not played", n, n))
		} else {
			probs = append(probs, fmt.Sprintf("turns %d-%d of %d were not played", s.played+1, n, n))
		}
	}
	if len(s.late) > 0 {
		what := "model request " + s.late[0]
		if len(s.late) > 1 {
			what = "model requests " + strings.Join(s.late, ", ")
		}
		probs = append(probs, fmt.Sprintf("%s came after the script ended (it has %s)", what, plural(len(s.script.Turns), "turn")))
	}
	if probs == nil {
		return nil
	}
	return errors.New("fakellm: " + strings.Join(probs, "; "))
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Close stops the server, cutting any request in flight.
func (s *Server) Close() error {
	err := s.srv.Close()
	s.closeLog()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (s *Server) closeLog() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil {
		s.log.Close()
		s.log = nil
	}
}

// Requests returns the requests received so far, in order of arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Remaining returns the number of turns not yet played.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Turns) - s.played
}

// next takes the next turn for r; ok is false when the script is
// exhausted, and r is then kept as a late request.
func (s *Server) next(r *http.Request) (t *Turn, n int, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.played >= len(s.script.Turns) {
		n = s.played + len(s.late) + 1
		s.late = append(s.late, fmt.Sprintf("%d (%s %s)", n, r.Method, r.URL.Path))
		return nil, n, false
	}
	s.played++
	return &s.script.Turns[s.played-1], s.played, true
}

// newID returns a fresh tool call id with the given prefix.
func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids++
	return fmt.Sprintf("%s%d", prefix, s.ids)
}

// record keeps a request and appends it to the log file.
func (s *Server) record(r *http.Request, body []byte, status, turn int) {
	rec := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Status: status, Turn: turn}
	if len(bytes.TrimSpace(body)) > 0 {
		var buf bytes.Buffer
		if json.Compact(&buf, body) == nil {
			rec.Body = buf.Bytes()
		} else {
			rec.Body, _ = json.Marshal(string(body))
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, rec)
	if s.log == nil {
		return
	}
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	line, err := json.Marshal(struct {
		Request
		Headers map[string]string `json:"headers"`
	}{rec, headers})
	if err == nil {
		s.log.Write(append(line, '\n'))
	}
}

// ServeHTTP routes a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/health":
		s.record(r, body, http.StatusOK, 0)
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	case r.Method == http.MethodGet && r.URL.Path == "/props":
		s.record(r, body, http.StatusOK, 0)
		writeJSON(w, http.StatusOK, map[string]int{"total_slots": s.opts.Slots})
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		s.record(r, body, http.StatusOK, 0)
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []map[string]string{{"id": "fakellm", "object": "model"}}})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/messages":
		s.serveModel(w, r, body, anthropicWire{s})
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.serveModel(w, r, body, openaiWire{s})
	default:
		s.record(r, body, http.StatusNotFound, 0)
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]string{"type": "not_found_error", "message": "fakellm: no route for " + r.Method + " " + r.URL.Path}})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
