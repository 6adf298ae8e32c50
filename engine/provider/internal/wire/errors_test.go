package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
)

const testKey = "sk-test-SECRET-42"

// noKey fails when s holds the test key or any 6-character prefix of it.
func noKey(t *testing.T, s string) {
	t.Helper()
	if strings.Contains(s, testKey[:6]) || strings.Contains(s, "SECRET") {
		t.Errorf("the key shows in %q", s)
	}
}

func testClient(key string) *Client {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return &Client{
		Provider:      "prov",
		Key:           key,
		Now:           func() time.Time { return clock },
		RetryableType: func(typ string) bool { return typ == "overloaded_error" },
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	tests := []struct{ s, key, want string }{
		{"key k1 and k1", "k1", "key [redacted] and [redacted]"},
		{"no key here", "k1", "no key here"},
		{"an empty key changes nothing", "", "an empty key changes nothing"},
		{"", "k1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.s, func(t *testing.T) {
			t.Parallel()
			if got := Redact(tt.s, tt.key); got != tt.want {
				t.Errorf("Redact(%q, %q) = %q, want %q", tt.s, tt.key, got, tt.want)
			}
		})
	}
}

func TestOneLine(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		s     string
		limit int
		want  string
	}{
		{"folded and trimmed", " a\n\tb  \r\n c ", 10, "a b c"},
		{"exactly the limit", "abcde", 5, "abcde"},
		{"cut", "abcdef", 5, "abcde..."},
		{"cut by characters, not bytes", "ééééé", 3, "ééé..."},
		{"cut after folding", "a    b    c", 3, "a b..."},
		{"no limit", strings.Repeat("x ", 500), 0, strings.TrimSpace(strings.Repeat("x ", 500))},
		{"empty", " \n ", 5, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := OneLine(tt.s, tt.limit); got != tt.want {
				t.Errorf("OneLine(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
			}
		})
	}
}

func TestErrorBody(t *testing.T) {
	t.Parallel()
	tests := []struct{ body, typ, msg string }{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded"},
		{`{"error":{"code":500,"message":"slot unavailable","type":"server_error"}}`, "server_error", "slot unavailable"},
		{`{"error":{"type":"x"}}`, "x", ""},
		{`{"error":"model not found"}`, "", "model not found"},
		{`{"message":"upstream"}`, "", "upstream"},
		{`{"error":{},"message":"top"}`, "", "top"},
		{`{"error":null}`, "", ""},
		{`<html>`, "", ""},
		{``, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			if typ, msg := ErrorBody([]byte(tt.body)); typ != tt.typ || msg != tt.msg {
				t.Errorf("ErrorBody(%s) = %q, %q, want %q, %q", tt.body, typ, msg, tt.typ, tt.msg)
			}
		})
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 75) + testKey
	tests := []struct {
		name, payload, want string
	}{
		{"short", `{"a": pong}`, `"{\"a\": pong}"`},
		{"cut at 80 characters", strings.Repeat("é", 81), `"` + strings.Repeat("é", 80) + `"...`},
		{"key redacted before the cut", long, `"` + strings.Repeat("x", 75) + `[reda"...`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := testClient(testKey).Quote([]byte(tt.payload))
			if got != tt.want {
				t.Errorf("Quote = %s, want %s", got, tt.want)
			}
			noKey(t, got)
		})
	}
}

func TestFailAndStreamError(t *testing.T) {
	t.Parallel()
	c := testClient(testKey)
	tests := []struct {
		name string
		err  *provider.Error
		want string
		retr bool
	}{
		{"fail", c.Fail(true, "stream ended early: %v", "x\ny"), "prov: stream ended early: x y", true},
		{"fail with the key", c.Fail(false, "bad %s", testKey), "prov: bad [redacted]", false},
		{"stream error", c.StreamError("overloaded_error", "Over\nloaded"), "prov: overloaded_error: Over loaded", true},
		{"stream error without a message", c.StreamError("", ""), "prov: error event in the stream", false},
		{"stream error of another type", c.StreamError("invalid", testKey), "prov: invalid: [redacted]", false},
		{"no RetryableType", (&Client{Provider: "p"}).StreamError("overloaded_error", "m"), "p: overloaded_error: m", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.err.Error() != tt.want || tt.err.Retryable != tt.retr || tt.err.Status != 0 {
				t.Errorf("error = %q %#v, want %q retryable %v", tt.err, tt.err, tt.want, tt.retr)
			}
		})
	}
}

func TestTransportError(t *testing.T) {
	t.Parallel()
	done, cancel := context.WithCancel(context.Background())
	cancel()
	refused := &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED}
	tests := []struct {
		name      string
		ctx       context.Context
		err       error
		want      string
		retryable bool
	}{
		{"refused", context.Background(), fmt.Errorf("dial: %w", refused), "prov: dial: connect: connection refused", false},
		{"reset", context.Background(), syscall.ECONNRESET, "prov: connection reset by peer", true},
		{"unexpected EOF", context.Background(), io.ErrUnexpectedEOF, "prov: unexpected EOF", true},
		{"context done", done, syscall.ECONNRESET, "prov: context canceled", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := testClient(testKey).TransportError(tt.ctx, tt.err)
			if err.Error() != tt.want {
				t.Errorf("error = %q, want %q", err, tt.want)
			}
			var perr *provider.Error
			switch {
			case tt.ctx.Err() != nil:
				if !errors.Is(err, context.Canceled) || errors.As(err, &perr) {
					t.Errorf("error %#v is not the context's", err)
				}
			case !errors.As(err, &perr) || perr.Retryable != tt.retryable:
				t.Errorf("error = %#v, want a *provider.Error, Retryable %v", err, tt.retryable)
			}
		})
	}
}

func TestHTTPError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		key       string
		status    int
		header    http.Header
		body      string
		want      string // Error()
		retryable bool
		after     time.Duration
	}{
		{"JSON body", testKey, 400, nil, `{"error":{"type":"invalid_request_error","message":"bad\nthing"}}`,
			"prov: HTTP 400: invalid_request_error: bad thing", false, 0},
		{"retryable type on 4xx, no message: the body", testKey, 400, nil, `{"error":{"type":"overloaded_error"}}`,
			`prov: HTTP 400: overloaded_error: {"error":{"type":"overloaded_error"}}`, true, 0},
		{"plain body folded", testKey, 502, nil, "<html>\n<b>bad gateway</b>\n</html>\n",
			"prov: HTTP 502: <html> <b>bad gateway</b> </html>", true, 0},
		{"empty body", testKey, 500, nil, "", "prov: HTTP 500: Internal Server Error", true, 0},
		{"retry-after seconds", testKey, 429, http.Header{"Retry-After": {"2"}}, `{"error":"slow down"}`,
			"prov: HTTP 429: slow down", true, 2 * time.Second},
		{"retry-after-ms first", testKey, 429, http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"250"}}, "",
			"prov: HTTP 429: Too Many Requests", true, 250 * time.Millisecond},
		{"retry-after date against the clock", testKey, 503, http.Header{"Retry-After": {"Fri, 02 Jan 2026 03:05:05 GMT"}}, "",
			"prov: HTTP 503: Service Unavailable", true, time.Minute},
		{"key refused", testKey, 401, nil, `{"error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`,
			"prov: HTTP 401: authentication_error: the API key was refused: invalid x-api-key [redacted]", false, 0},
		{"no key set", "", 403, nil, "not for you",
			"prov: HTTP 403: the server wants an API key and none is set: not for you", false, 0},
		{"key echoed at the cut", testKey, 418, nil, strings.Repeat("x", 295) + testKey,
			"prov: HTTP 418: " + strings.Repeat("x", 295) + "[reda...", false, 0},
		{"key in the type", testKey, 400, nil, `{"error":{"type":"` + testKey + `","message":"m"}}`,
			"prov: HTTP 400: [redacted]: m", false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp := &http.Response{StatusCode: tt.status, Header: tt.header, Body: io.NopCloser(strings.NewReader(tt.body))}
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			perr := testClient(tt.key).HTTPError(resp)
			if perr.Error() != tt.want || perr.Retryable != tt.retryable || perr.RetryAfter != tt.after || perr.Status != tt.status {
				t.Errorf("error = %q %#v\nwant %q, retryable %v, after %v", perr, perr, tt.want, tt.retryable, tt.after)
			}
			noKey(t, perr.Error())
		})
	}
}

// TestKeyNeverPartly echoes the key at every offset around the cut.
func TestKeyNeverPartly(t *testing.T) {
	t.Parallel()
	c := testClient(testKey)
	for n := MaxMessage - len(testKey) - 5; n <= MaxMessage+5; n++ {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			text := strings.Repeat("y", n) + testKey + " tail"
			resp := &http.Response{StatusCode: 500, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(text))}
			for _, err := range []error{
				c.HTTPError(resp),
				c.Fail(true, "%s", text),
				c.Fail(false, "malformed %s", c.Quote([]byte(text[n-70:]))),
				c.StreamError(text, text),
			} {
				noKey(t, err.Error())
			}
		})
	}
}

// TestKeyNeverPartlyInABody echoes the key at every offset around the cut
// of an unexpected body.
func TestKeyNeverPartlyInABody(t *testing.T) {
	t.Parallel()
	c := testClient(testKey)
	for n := bodyPeekMax - len(testKey) - 5; n <= bodyPeekMax+5; n++ {
		resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/html"}},
			Body: io.NopCloser(strings.NewReader(strings.Repeat("y", n) + testKey + " tail"))}
		if perr := c.WrongContentType(resp, "http://h/"); perr == nil {
			t.Fatalf("%d: text/html accepted", n)
		} else {
			noKey(t, perr.Error())
		}
	}
}
