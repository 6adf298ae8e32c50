package providertest

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// The timeouts below are short, but the tests assert only which timeout
// fired: every server here stays silent for as long as the client waits, so
// a slow machine changes when the error comes, not what it says. The
// timeout a test is not about is long, so that it cannot fire first.
const (
	short = 150 * time.Millisecond
	long  = time.Minute
)

// endpoint is the URL a flavour posts to on srv.
func (f flavour) endpoint(srv *fakellm.Server) string {
	if f.wire == "anthropic" {
		return srv.URL() + "/v1/messages"
	}
	return srv.URL() + "/v1/chat/completions"
}

// TestTimeouts plays servers that never finish: each request fails with
// one line that names the provider, the URL and the timeout that fired,
// and that the retry policy retries.
func TestTimeouts(t *testing.T) {
	t.Parallel()
	firstByte := provider.Timeouts{FirstByte: short, Idle: long}
	idle := provider.Timeouts{FirstByte: long, Idle: short}
	tests := []struct {
		name     string
		turn     string
		timeouts provider.Timeouts
		want     string // the message after the URL's host
	}{
		{"accepts and never answers", `{"hang":true}`, firstByte, "first-byte timeout: no answer from URL within 150ms"},
		// Headers and keep-alives are no part of the answer.
		{"headers then only keep-alives", `{"text":"never","ping_after":0}`, firstByte, "first-byte timeout: no answer from URL within 150ms"},
		{"a stream that stalls into keep-alives", `{"text":"one two three four","ping_after":4}`, idle, "idle timeout: the stream from URL stalled for 150ms"},
		// The first event alone begins the answer (Anthropic's
		// message_start, OpenAI's role chunk).
		{"keep-alives after the first event", `{"text":"one two","ping_after":1}`, idle, "idle timeout: the stream from URL stalled for 150ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEach(t, func(t *testing.T, f flavour) {
				f.x.timeouts = tt.timeouts
				p, srv := f.start(t, `{"turns":[`+tt.turn+`]}`)
				_, _, err := ask(p, nil)
				perr := asError(t, err)
				want := f.provider + ": " + strings.Replace(tt.want, "URL", f.endpoint(srv), 1)
				if err.Error() != want || !perr.Retryable || perr.Status != 0 {
					t.Errorf("error = %q %#v\nwant %q, retryable", err, perr, want)
				}
			})
		})
	}
}

// TestTimeoutRetried: a timeout is retried like a dropped connection.
func TestTimeoutRetried(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		f.x.timeouts = provider.Timeouts{FirstByte: short}
		p, srv := f.start(t, `{"turns":[{"hang":true},{"text":"at last"}]}`)
		var notes []string
		rp := provider.WithRetry(p, provider.RetryOptions{
			Sleep:   func(context.Context, time.Duration) error { return nil },
			OnRetry: func(n int, err error, _ time.Duration) { notes = append(notes, fmt.Sprintf("%d %v", n, err)) },
		})
		resp, _, err := ask(rp, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content[0].Text != "at last" || len(notes) != 1 || !strings.Contains(notes[0], "first-byte timeout") {
			t.Errorf("content %+v, retries %q", resp.Content, notes)
		}
		if reqs := srv.Requests(); len(reqs) != 2 || reqs[0].Status != 0 {
			t.Errorf("the fake got %+v", reqs)
		}
	})
}

// TestConnectTimeout dials through a dialer that never connects: the
// connect timeout fires, naming the URL without its password.
func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	stuck := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(long):
				return nil, fmt.Errorf("the test's dialer gave up")
			}
		},
	}}
	forEach(t, func(t *testing.T, f flavour) {
		key := f.key
		if key == "" {
			key = testKey
		}
		p := f.make("http://user:hunter2@192.0.2.1:9", key, extras{timeouts: provider.Timeouts{Connect: short}, http: stuck})
		_, _, err := ask(p, nil)
		perr := asError(t, err)
		path := "/v1/chat/completions"
		if f.wire == "anthropic" {
			path = "/v1/messages"
		}
		want := f.provider + ": connect timeout: no connection to http://user:xxxxx@192.0.2.1:9" + path + " within 150ms"
		if err.Error() != want || !perr.Retryable {
			t.Errorf("error = %q %#v\nwant %q, retryable", err, perr, want)
		}
	})
}
