package fakellm

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// newRequest builds a POST with the headers every client sends.
func newRequest(s *Server, path, body string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, s.URL()+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	return req, nil
}

// do sends a request and returns the status and the answer.
func do(t *testing.T, req *http.Request) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// post sends a body to the fake, with extra header name, value pairs.
func post(t *testing.T, s *Server, path, body string, header ...string) (int, string) {
	t.Helper()
	req, err := newRequest(s, path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return do(t, req)
}

func get(t *testing.T, s *Server, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(s.URL() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(b))
}

func start(t *testing.T, script string, opts Options) *Server {
	t.Helper()
	sc, err := ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	return New(t, sc, opts)
}

const (
	aHello = `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	oHello = `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
)

func TestSideEndpoints(t *testing.T) {
	t.Parallel()
	s := start(t, `{"turns":[]}`, Options{Slots: 4})
	tests := []struct{ path, want string }{
		{"/props", `{"total_slots":4}`},
		{"/health", `{"status":"ok"}`},
		{"/v1/models", `{"data":[{"id":"fakellm","object":"model"}],"object":"list"}`},
	}
	for _, tt := range tests {
		if code, got := get(t, s, tt.path); code != 200 || got != tt.want {
			t.Errorf("GET %s = %d %s, want %s", tt.path, code, got, tt.want)
		}
	}
	if code, got := get(t, s, "/nope"); code != 404 || !strings.Contains(got, "no route for GET /nope") {
		t.Errorf("GET /nope = %d %s", code, got)
	}
	if code, got := get(t, start(t, `{"turns":[]}`, Options{}), "/props"); code != 200 || got != `{"total_slots":1}` {
		t.Errorf("default slots: %d %s", code, got)
	}
}

func TestUnstreamed(t *testing.T) {
	t.Parallel()
	s := start(t, `{"turns":[
		{"text":"hi","tool_calls":[{"id":"c1","name":"f","input":{"a":1}}],"usage":{"input_tokens":5,"output_tokens":2,"cache_read_tokens":3}},
		{"thinking":"t","text":"yo","usage":{"input_tokens":5,"output_tokens":2}}]}`, Options{})
	code, got := post(t, s, "/v1/messages", aHello)
	want := `{"content":[{"type":"text","text":"hi"},{"id":"c1","input":{"a":1},"name":"f","type":"tool_use"}],"id":"msg_fake_1","model":"m","role":"assistant",` +
		`"stop_reason":"tool_use","stop_sequence":null,"type":"message","usage":{"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"input_tokens":5,"output_tokens":2}}`
	if code != 200 || !jsonEqual(got, want) {
		t.Errorf("anthropic: %d\n got %s\nwant %s", code, got, want)
	}
	code, got = post(t, s, "/v1/chat/completions", oHello)
	want = `{"choices":[{"finish_reason":"stop","index":0,"message":{"content":"yo","reasoning_content":"t","role":"assistant"}}],"created":0,"id":"chatcmpl-fake-2",` +
		`"model":"m","object":"chat.completion","usage":{"completion_tokens":2,"prompt_tokens":5,"prompt_tokens_details":{"cached_tokens":0},"total_tokens":7}}`
	if code != 200 || !jsonEqual(got, want) {
		t.Errorf("openai: %d\n got %s\nwant %s", code, got, want)
	}
}

// fakeTB records what New does with its test.
type fakeTB struct {
	cleanups []func()
	errs     []string
}

func (f *fakeTB) Helper()           {}
func (f *fakeTB) Cleanup(fn func()) { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Errorf(format string, args ...any) {
	f.errs = append(f.errs, fmt.Sprintf(format, args...))
}
func (f *fakeTB) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }

// end runs the cleanups, as the end of a test does.
func (f *fakeTB) end() {
	for _, fn := range slices.Backward(f.cleanups) {
		fn()
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	const (
		two   = `{"turns":[{"text":"a"},{"text":"b"}]}`
		three = `{"turns":[{"text":"a"},{"text":"b"},{"text":"c"}]}`
	)
	type req struct{ path, body string }
	tests := []struct {
		name   string
		script string
		opts   Options
		reqs   []req
		codes  []int  // the status of each request
		want   string // the test's failure, "" for none
	}{
		{"all played", two, Options{}, []req{{"/v1/messages", aHello}, {"/v1/chat/completions", oHello}}, []int{200, 200}, ""},
		{"none played", two, Options{}, nil, nil, "fakellm: turns 1-2 of 2 were not played"},
		{"last not played", three, Options{}, []req{{"/v1/messages", aHello}, {"/v1/messages", aHello}}, []int{200, 200},
			"fakellm: turn 3 of 3 was not played"},
		{"one late", `{"turns":[{"text":"a"}]}`, Options{}, []req{{"/v1/messages", aHello}, {"/v1/chat/completions", oHello}}, []int{200, 400},
			"fakellm: model request 2 (POST /v1/chat/completions) came after the script ended (it has 1 turn)"},
		{"late, no turns", `{"turns":[]}`, Options{},
			[]req{{"/v1/messages", aHello}, {"/v1/chat/completions", oHello}}, []int{400, 400},
			"fakellm: model requests 1 (POST /v1/messages), 2 (POST /v1/chat/completions) came after the script ended (it has 0 turns)"},
		{"refused requests are not late", `{"turns":[]}`, Options{APIKey: "k"},
			[]req{{"/v1/messages", aHello}, {"/v1/chat/completions", `{"model":"m"}`}}, []int{401, 401}, ""},
		{"invalid requests are not late", `{"turns":[]}`, Options{}, []req{{"/v1/chat/completions", `{"model":"m"}`}}, []int{400}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sc, err := ParseScript([]byte(tt.script))
			if err != nil {
				t.Fatal(err)
			}
			tb := &fakeTB{}
			s := New(tb, sc, tt.opts)
			for i, r := range tt.reqs {
				if code, body := post(t, s, r.path, r.body); code != tt.codes[i] {
					t.Errorf("request %d: %d %s, want status %d", i+1, code, body, tt.codes[i])
				}
			}
			if len(tb.errs) > 0 {
				t.Errorf("failed before the end: %q", tb.errs)
			}
			tb.end()
			var want []string
			if tt.want != "" {
				want = []string{tt.want}
			}
			if !slices.Equal(tb.errs, want) {
				t.Errorf("at the end the test failed with %q, want %q", tb.errs, want)
			}
			if err := s.Verify(); fmt.Sprint(err) != fmt.Sprint(cmpErr(tt.want)) {
				t.Errorf("Verify() = %v, want %q", err, tt.want)
			}
		})
	}
}

func cmpErr(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

func TestExhausted(t *testing.T) {
	t.Parallel()
	sc, _ := ParseScript([]byte(`{"turns":[{"text":"a"},{"text":"b"}]}`))
	s, err := Start(sc, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	post(t, s, "/v1/messages", aHello)
	post(t, s, "/v1/messages", aHello)
	for _, n := range []string{"3", "4"} {
		code, got := post(t, s, "/v1/chat/completions", oHello)
		if code != 400 || !strings.Contains(got, "fakellm: script exhausted: this is model request "+n+" and the script has 2 turns") {
			t.Errorf("exhausted: %d %s", code, got)
		}
	}
}

func TestNewCannotStart(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not a loopback address") {
			t.Errorf("New on a public address: %v", r)
		}
	}()
	New(&fakeTB{}, nil, Options{Addr: "0.0.0.0:0"})
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	ja, _ := json.Marshal(x)
	jb, _ := json.Marshal(y)
	return bytes.Equal(ja, jb)
}

func TestStreamedOpenAINoIndex(t *testing.T) {
	t.Parallel()
	s := start(t, `{"turns":[{"tool_calls":[{"name":"f","arguments":"{\"ab\":1}"}]}]}`, Options{NoIndex: true, SplitArgs: 4})
	code, got := post(t, s, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if code != 200 {
		t.Fatalf("%d %s", code, got)
	}
	var lines []string
	sc := bufio.NewScanner(strings.NewReader(got))
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	want := []string{
		`data: {"choices":[{"delta":{"content":"","role":"assistant"},"finish_reason":null,"index":0}],"created":0,"id":"chatcmpl-fake-1","model":"m","object":"chat.completion.chunk"}`,
		`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"","name":"f"},"id":"call_fake_1","type":"function"}]},"finish_reason":null,"index":0}],"created":0,"id":"chatcmpl-fake-1","model":"m","object":"chat.completion.chunk"}`,
		`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"ab"}}]},"finish_reason":null,"index":0}],"created":0,"id":"chatcmpl-fake-1","model":"m","object":"chat.completion.chunk"}`,
		`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\":1}"}}]},"finish_reason":null,"index":0}],"created":0,"id":"chatcmpl-fake-1","model":"m","object":"chat.completion.chunk"}`,
		`data: {"choices":[{"delta":{},"finish_reason":"tool_calls","index":0}],"created":0,"id":"chatcmpl-fake-1","model":"m","object":"chat.completion.chunk"}`,
		`data: [DONE]`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("stream\n got %s\nwant %s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestRecording(t *testing.T) {
	t.Parallel()
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	s := start(t, `{"turns":[{"status":429,"retry_after":"3"},{"text":"ok"}]}`, Options{LogPath: logPath, APIKey: "k1"})
	body := `{"model":"m", "seed":42, "cache_prompt":true, "messages":[{"role":"user","content":"<hi>"}]}`
	post(t, s, "/v1/chat/completions", body, "Authorization", "Bearer wrong")
	if code, _ := post(t, s, "/v1/chat/completions", body, "Authorization", "Bearer k1"); code != 429 {
		t.Errorf("status = %d, want 429", code)
	}
	post(t, s, "/v1/chat/completions", body, "Authorization", "Bearer k1")
	get(t, s, "/health")
	reqs := s.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests recorded", len(reqs))
	}
	for i, want := range []struct{ status, turn int }{{401, 0}, {429, 1}, {200, 2}, {200, 0}} {
		if reqs[i].Status != want.status || reqs[i].Turn != want.turn {
			t.Errorf("request %d: status %d turn %d, want %d %d", i, reqs[i].Status, reqs[i].Turn, want.status, want.turn)
		}
	}
	if string(reqs[1].Body) != `{"model":"m","seed":42,"cache_prompt":true,"messages":[{"role":"user","content":"<hi>"}]}` || reqs[1].Header.Get("Authorization") != "Bearer k1" {
		t.Errorf("request 1: %s %v", reqs[1].Body, reqs[1].Header)
	}
	s.Close()
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) != 4 || !strings.Contains(lines[2], `"seed":42`) || !strings.Contains(lines[2], `"cache_prompt":true`) ||
		!strings.Contains(lines[2], `"authorization":"Bearer k1"`) || !strings.Contains(lines[2], `"path":"/v1/chat/completions"`) {
		t.Errorf("log:\n%s", log)
	}
}

func TestNotLoopback(t *testing.T) {
	t.Parallel()
	if _, err := Start(nil, Options{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "not a loopback address") {
		t.Errorf("Start on 0.0.0.0: %v", err)
	}
}

func TestParseScriptErrors(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		`{"turns":[{"txt":"x"}]}`:                                `unknown field "txt"`,
		`{"turns":[{"status":200}]}`:                             "turn 1: status 200 is not an error status",
		`{"turns":[{"cut_after":1,"drop_after":2}]}`:             "at most one of",
		`{"turns":[{"status":500,"cut_after":1}]}`:               "no stream fault",
		`{"turns":[{"cut_after":-1}]}`:                           "negative",
		`{"turns":[{"text":"a"},{"tool_calls":[{"input":{}}]}]}`: "turn 2: tool call 1 has no name",
		`{"turns":[{"tool_calls":[{"name":"f","input":"s"}]}]}`:  "not a JSON object",
		`{"turns":[]}x`: "text after",
		`{"turns":[{"cut_after":1,"ping_after":2}]}`: "at most one of",
		`{"turns":[{"content_type":"text/html"}]}`:   "there is none",
		`{"turns":[{"body":"x","drop_after":1}]}`:    "a body has no stream fault",
		`{"turns":[{"hang":true,"status":500}]}`:     "sends nothing else",
		`{"turns":[{"hang":true,"delay_ms":5}]}`:     "sends nothing else",
		`{"turns":[{"error":{"message":"m"}}]}`:      "turn 1: error is not played by the fakellm server",
	}
	for in, want := range tests {
		if _, err := ParseScript([]byte(in)); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "fakellm: ") {
			t.Errorf("ParseScript(%s) = %v, want %q", in, err, want)
		}
	}
}

func TestUnstreamedFaults(t *testing.T) {
	t.Parallel()
	s := start(t, `{"turns":[
		{"text":"hello there","cut_after":2},
		{"text":"x","stream_error":{"after":0,"type":"overloaded_error","message":"busy"},"echo_key":true},
		{"status":503,"retry_after":"5","error_message":"down"}]}`, Options{})
	code, got := post(t, s, "/v1/messages", aHello, "X-Api-Key", "kk")
	if code != 200 || json.Valid([]byte(got)) || !strings.HasPrefix(got, `{"content":`) {
		t.Errorf("cut: %d %s", code, got)
	}
	code, got = post(t, s, "/v1/messages", aHello, "X-Api-Key", "kk")
	if code != 500 || errMessage(got) != "overloaded_error: busy (your key: kk)" {
		t.Errorf("stream_error: %d %s", code, got)
	}
	req, _ := newRequest(s, "/v1/chat/completions", oHello)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 503 || resp.Header.Get("Retry-After") != "5" || errMessage(string(b)) != "overloaded_error: down" {
		t.Errorf("status: %d %v %s", resp.StatusCode, resp.Header, b)
	}
}

// TestHang: the server takes the turn and sends nothing until the client
// gives up.
func TestHang(t *testing.T) {
	t.Parallel()
	s := start(t, `{"turns":[{"hang":true}]}`, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := newRequest(s, "/v1/messages", aHello)
	req.Header.Set("X-Api-Key", "k")
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the hanging server answered %d", resp.StatusCode)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the client's deadline", err)
	}
	if reqs := s.Requests(); len(reqs) != 1 || reqs[0].Status != 0 || reqs[0].Turn != 1 {
		t.Errorf("recorded %+v", reqs)
	}
}

// TestPingAfter: after N events, only keep-alives, for as long as the
// client reads.
func TestPingAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		path, body string
		events     int    // data lines before the keep-alives, pings aside
		keepAlive  string // a line of a keep-alive
	}{
		{"/v1/messages", `{"model":"m","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`, 1, "event: ping"}, // message_start, then the API's own ping
		{"/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`, 2, ": keep-alive"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			t.Parallel()
			s := start(t, `{"turns":[{"text":"a b c d e f","ping_after":2}]}`, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := newRequest(s, tc.path, tc.body)
			req.Header.Set("X-Api-Key", "k")
			resp, err := http.DefaultClient.Do(req.WithContext(ctx))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
				t.Errorf("content type %q", ct)
			}
			sc := bufio.NewScanner(resp.Body)
			data, keepAlives := 0, 0
			for keepAlives < 5 && sc.Scan() {
				switch line := sc.Text(); {
				case line == tc.keepAlive:
					keepAlives++
				case !strings.HasPrefix(line, "data: ") || strings.Contains(line, `"ping"`):
				case keepAlives == 0:
					data++
				default:
					t.Errorf("data after the keep-alives began: %s", line)
				}
			}
			if data != tc.events || keepAlives != 5 {
				t.Errorf("%d data lines, %d keep-alives (err %v)", data, keepAlives, sc.Err())
			}
		})
	}
}

// TestBodyAnswer: a body without a status is a 200 answer of its content
// type.
func TestBodyAnswer(t *testing.T) {
	t.Parallel()
	s := start(t, `{"turns":[{"body":"<html><title>Log in</title></html>","content_type":"text/html; charset=utf-8"},{"body":"{\"x\":1}"}]}`, Options{})
	req, _ := newRequest(s, "/v1/chat/completions", oHello)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/html; charset=utf-8" || string(b) != "<html><title>Log in</title></html>" {
		t.Errorf("%d %q %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	if code, got := post(t, s, "/v1/chat/completions", oHello); code != 200 || got != `{"x":1}` {
		t.Errorf("JSON body: %d %s", code, got)
	}
}
