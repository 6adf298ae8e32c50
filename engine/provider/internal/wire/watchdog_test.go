package wire

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
)

// The timeouts are short but the servers below stay silent for as long as
// the client waits: the tests assert which timeout fired, never how long
// it took. The timeout a case is not about is long, so it cannot fire first.
const (
	short = 100 * time.Millisecond
	long  = time.Minute
)

// TestPostTimeouts: which timeout fires depends on what the server sent
// before it fell silent.
func TestPostTimeouts(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/hang":
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"half": `))
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			w.Write([]byte(": keep-alive\n\ndata: {}\n\n"))
		}
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	firstByte := provider.Timeouts{FirstByte: short, Idle: long}
	idle := provider.Timeouts{FirstByte: long, Idle: short}
	tests := []struct {
		name     string
		path     string
		timeouts provider.Timeouts
		progress bool // the reader calls Progress after reading
		want     string
	}{
		{"no answer", "/hang", firstByte, false, "prov: first-byte timeout: no answer from URL/hang within 100ms"},
		// A JSON answer's bytes are the answer: the first ends the wait for it.
		{"half a JSON answer", "/json", idle, false, "prov: idle timeout: the stream from URL/json stalled for 100ms"},
		// An event stream's bytes may be keep-alives: only its reader knows.
		{"events nobody called progress", "/sse", firstByte, false, "prov: first-byte timeout: no answer from URL/sse within 100ms"},
		{"events called progress", "/sse", idle, true, "prov: idle timeout: the stream from URL/sse stalled for 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := testClient(testKey)
			c.HTTP = srv.Client()
			c.Timeouts = tt.timeouts
			want := strings.Replace(tt.want, "URL", srv.URL, 1)
			ans, err := c.Post(context.Background(), srv.URL+tt.path, nil, nil)
			if err == nil {
				defer ans.Body.Close()
				buf := make([]byte, 64)
				for err == nil {
					var n int
					n, err = ans.Body.Read(buf)
					if n > 0 && tt.progress {
						ans.Progress()
					}
				}
			}
			perr := AsError(err)
			if perr == nil || err.Error() != want || !perr.Retryable {
				t.Errorf("err = %q %#v\nwant %q, retryable", err, err, want)
			}
		})
	}
}

// TestIdleRestartsOnProgress drives the watchdog by hand: an idle timer
// that fires less than the limit after the last progress is set again for
// the rest, one that fires later expires.
func TestIdleRestartsOnProgress(t *testing.T) {
	t.Parallel()
	c := testClient("")
	c.Timeouts = provider.Timeouts{Idle: time.Hour}
	ctx, d := c.watch(context.Background(), "http://h/x")
	defer d.stop()
	d.connected()
	d.progress() // the answer began: the idle phase
	d.progress()
	d.expire(phaseIdle) // early: progress was just now
	if d.expired() != nil || ctx.Err() != nil {
		t.Fatalf("expired %v after progress", d.expired())
	}
	d.mu.Lock()
	d.last = d.last.Add(-2 * time.Hour)
	d.mu.Unlock()
	d.expire(phaseIdle)
	if perr := d.expired(); perr == nil || perr.Error() != "prov: idle timeout: the stream from http://h/x stalled for 1h0m0s" || ctx.Err() == nil {
		t.Errorf("expired = %v, context %v", perr, ctx.Err())
	}
	d.progress() // too late: nothing changes
	if d.expired() == nil {
		t.Error("progress after the timeout cleared it")
	}
}

// TestNegativeTimeoutIsNone: a negative limit sets no timer.
func TestNegativeTimeoutIsNone(t *testing.T) {
	t.Parallel()
	c := testClient("")
	c.Timeouts = provider.Timeouts{Connect: -1, FirstByte: -1, Idle: -1}
	_, d := c.watch(context.Background(), "http://h/x")
	defer d.stop()
	for _, step := range []func(){d.connected, d.progress} {
		step()
		d.mu.Lock()
		timer := d.timer
		d.mu.Unlock()
		if timer != nil {
			t.Errorf("phase %s has a timer", d.phase)
		}
	}
}
