package providertest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// asError returns err as a *provider.Error, failing the test otherwise.
func asError(t *testing.T, err error) *provider.Error {
	t.Helper()
	var perr *provider.Error
	if !errors.As(err, &perr) {
		t.Fatalf("error %v (%T) is not a *provider.Error", err, err)
	}
	noKey(t, err)
	return perr
}

func TestHTTPErrors(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 400)
	date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name      string
		turn      string
		status    int
		typ       string
		retryable bool
		after     time.Duration // at least
		message   string        // substring
	}{
		{"rate limit", `{"status":429,"retry_after":"2","error_message":"slow down"}`, 429, "rate_limit_error", true, 2 * time.Second, "slow down"},
		{"overloaded", `{"status":529,"error_message":"Overloaded"}`, 529, "overloaded_error", true, 0, "Overloaded"},
		{"server error", `{"status":500}`, 500, "api_error", true, 0, "Internal Server Error"},
		{"retry-after date", `{"status":503,"retry_after":"` + date + `"}`, 503, "overloaded_error", true, 59 * time.Minute, "Service Unavailable"},
		{"bad request", `{"status":400,"error_message":"bad\nthing\there"}`, 400, "invalid_request_error", false, 0, "bad thing here"},
		{"overloaded type on 4xx", `{"status":400,"error_type":"overloaded_error"}`, 400, "overloaded_error", true, 0, "Bad Request"},
		{"Ollama's string error", `{"status":503,"body":"{\"error\":\"model is loading\"}"}`, 503, "", true, 0, "model is loading"},
		{"plain text body", `{"status":502,"body":"<html>\n<b>bad gateway</b>\n</html>"}`, 502, "", true, 0, "<html> <b>bad gateway</b> </html>"},
		{"long body", `{"status":500,"error_message":"` + long + `"}`, 500, "api_error", true, 0, "word word"},
		{"forbidden", `{"status":403,"error_message":"not for you"}`, 403, "permission_error", false, 0, "the API key was refused: not for you"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEach(t, func(t *testing.T, f flavour) {
				p, _ := f.start(t, `{"turns":[`+tt.turn+`]}`)
				_, _, err := ask(p, nil)
				perr := asError(t, err)
				if perr.Provider != f.provider || perr.Status != tt.status || perr.Type != tt.typ || perr.Retryable != tt.retryable {
					t.Errorf("error = %#v", perr)
				}
				if perr.RetryAfter < tt.after || (tt.after == 0 && perr.RetryAfter != 0) || perr.RetryAfter > tt.after+time.Hour {
					t.Errorf("RetryAfter = %v, want %v", perr.RetryAfter, tt.after)
				}
				want := tt.message
				if f.key == "" && tt.status == 403 {
					want = "the server wants an API key and none is set: not for you"
				}
				if !strings.Contains(perr.Message, want) || len(perr.Message) > 320 {
					t.Errorf("message = %q (%d bytes), want it to contain %q", perr.Message, len(perr.Message), want)
				}
				if !strings.HasPrefix(err.Error(), fmt.Sprintf("%s: HTTP %d: ", f.provider, tt.status)) {
					t.Errorf("Error() = %q", err)
				}
			})
		})
	}
}

func TestRetryThroughFake(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		p, srv := f.start(t, `{"turns":[{"status":429,"retry_after":"1"},{"status":529},{"text":"at last"}]}`)
		var waits []time.Duration
		var notes []string
		rp := provider.WithRetry(p, provider.RetryOptions{
			Rand:    func() float64 { return 0.5 },
			Sleep:   func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil },
			OnRetry: func(n int, err error, d time.Duration) { notes = append(notes, fmt.Sprintf("%d %v", n, err)) },
		})
		resp, _, err := ask(rp, nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Content[0].Text != "at last" {
			t.Errorf("content = %+v", resp.Content)
		}
		if len(waits) != 2 || waits[0] != time.Second || waits[1] != 750*time.Millisecond {
			t.Errorf("waits = %v, want [1s 750ms]", waits)
		}
		if len(notes) != 2 || !strings.HasPrefix(notes[1], "2 "+f.provider+": HTTP 529: overloaded_error") {
			t.Errorf("OnRetry saw %q", notes)
		}
		if n := len(srv.Requests()); n != 3 {
			t.Errorf("the fake got %d requests, want 3", n)
		}
	})
}

func TestStreamFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fault     string
		typ       string
		retryable bool
		message   string
	}{
		{"cut", `"cut_after":3`, "", true, "stream ended early"},
		{"dropped", `"drop_after":3`, "", true, "stream ended early"},
		{"malformed", `"malformed_after":3`, "", false, "malformed"},
		{"error event", `"stream_error":{"after":2,"type":"overloaded_error","message":"Overloaded"}`, "overloaded_error", true, "Overloaded"},
		{"fatal error event", `"stream_error":{"after":2,"type":"invalid_request_error","message":"nope"}`, "invalid_request_error", false, "nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEach(t, func(t *testing.T, f flavour) {
				p, _ := f.start(t, `{"turns":[{"text":"one two three four five six",`+tt.fault+`}]}`)
				_, _, err := ask(p, nil)
				perr := asError(t, err)
				if perr.Type != tt.typ || perr.Retryable != tt.retryable || !strings.Contains(perr.Message, tt.message) || perr.Provider != f.provider {
					t.Errorf("error = %#v", perr)
				}
			})
		})
	}
}

// TestNoPartialAnswer cuts or breaks the stream after every possible event:
// the client either fails or returns the whole answer, never a part of it.
func TestNoPartialAnswer(t *testing.T) {
	t.Parallel()
	const answer = `"thinking":"hm hm","text":"a b c","tool_calls":[{"name":"x","input":{"k":"vvvvvv"}},{"name":"y"}],"usage":{"input_tokens":9,"output_tokens":7}`
	for _, fault := range []string{"cut_after", "drop_after", "malformed_after"} {
		t.Run(fault, func(t *testing.T) {
			t.Parallel()
			forEach(t, func(t *testing.T, f flavour) {
				whole := 0
				for n := 0; n < 60 && whole < 2; n++ {
					p, _ := f.start(t, fmt.Sprintf(`{"turns":[{%s,%q:%d}]}`, answer, fault, n))
					resp, _, err := ask(p, nil)
					if err != nil {
						asError(t, err)
						if whole > 0 {
							t.Errorf("%s %d fails after a shorter stream succeeded: %v", fault, n, err)
						}
						continue
					}
					whole++
					if len(resp.Content) != 4 || resp.Content[1].Text != "a b c" || string(resp.Content[3].Input) != `{}` || resp.Usage.OutputTokens != 7 {
						t.Errorf("%s %d: a partial answer was accepted: %+v", fault, n, resp)
					}
				}
				if whole == 0 {
					t.Errorf("no stream was long enough to succeed")
				}
			})
		})
	}
}

func TestKeyRefused(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		f.fake.APIKey = "the-right-key"
		f.key = "" // start uses it for both sides; set the client's below
		// No turns: a refused key consumes none.
		srv := fakellm.New(t, nil, f.fake)
		p := f.make(srv.URL(), testKey, extras{})
		_, _, err := ask(p, nil)
		perr := asError(t, err)
		if perr.Status != 401 || perr.Retryable || !strings.Contains(perr.Message, "the API key was refused") || !strings.Contains(perr.Message, "[redacted]") {
			t.Errorf("error = %#v", perr)
		}
	})
}

func TestKeyEchoedNeverShown(t *testing.T) {
	t.Parallel()
	turns := []string{
		`{"status":500,"echo_key":true}`,
		`{"status":400,"body":"{\"error\":{\"type\":\"x\",\"message\":\"bad key ` + testKey + `\"}}"}`,
		`{"text":"a","stream_error":{"after":1,"type":"api_error","message":"oops"},"echo_key":true}`,
		`{"status":418,"body":"` + strings.Repeat("x", 290) + testKey + `"}`,
	}
	for i, turn := range turns {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			t.Parallel()
			forEach(t, func(t *testing.T, f flavour) {
				if f.key == "" {
					f.key = testKey // a local server with a key
				}
				p, _ := f.start(t, `{"turns":[`+turn+`]}`)
				_, _, err := ask(p, nil)
				asError(t, err)
			})
		})
	}
}

func TestMissingKey(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		if f.provider == "local" {
			return // needs none
		}
		p := f.make("http://127.0.0.1:1", "", extras{})
		_, _, err := ask(p, nil)
		if perr := asError(t, err); perr.Retryable || !strings.Contains(perr.Message, "no API key") {
			t.Errorf("error = %#v", perr)
		}
	})
}

func TestCancelStopsWaiting(t *testing.T) {
	t.Parallel()
	forEach(t, func(t *testing.T, f flavour) {
		p, _ := f.start(t, `{"turns":[{"text":"late","delay_ms":10000}]}`)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		// Had the deadline not stopped the wait, the late answer would
		// arrive and the call succeed.
		_, err := p.Complete(ctx, &provider.Request{Model: "m", MaxTokens: 10, Messages: conversation().Messages[:1]})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want the deadline", err)
		}
	})
}

func TestConnectionRefused(t *testing.T) {
	t.Parallel()
	// Port 1 needs privileges to bind: nothing listens there, and no other
	// test can take it, as it could a port just closed.
	forEach(t, func(t *testing.T, f flavour) {
		p := f.make("http://127.0.0.1:1", testKey, extras{})
		_, _, err := ask(p, nil)
		if perr := asError(t, err); perr.Retryable || perr.Status != 0 || !strings.Contains(perr.Message, "refused") {
			t.Errorf("error = %#v", perr)
		}
	})
}
