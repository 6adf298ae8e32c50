package wire

import (
	"context"
	"fmt"
	"io"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
)

// The phases of a request, each bounded by one of provider.Timeouts.
const (
	phaseConnect   = "connect"
	phaseFirstByte = "first-byte"
	phaseIdle      = "idle"
)

// watchdog enforces the timeouts of one request by cancelling its context,
// after which every read of it fails with the *provider.Error that says
// which timeout fired. It works with any *http.Client: the end of the
// connect phase is seen through httptrace, and progress is reported by the
// reader of the answer. One timer serves every phase; progress only
// records the time, and an idle timer that fires early is set again for
// what is left.
type watchdog struct {
	w      *Client
	url    string // redacted of any password, for the messages
	limits provider.Timeouts
	cancel context.CancelFunc

	mu      sync.Mutex
	phase   string
	timer   *time.Timer
	last    time.Time // the last progress
	fired   *provider.Error
	stopped bool
}

// watch returns a context derived from ctx that the watchdog cancels when
// a timeout fires, and the watchdog, in its connect phase. Stop it when the
// request is done.
func (w *Client) watch(ctx context.Context, url string) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancel(ctx)
	d := &watchdog{w: w, url: url, limits: w.Timeouts.WithDefaults(), cancel: cancel}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { d.connected() },
	})
	d.enter(phaseConnect)
	return ctx, d
}

// enter starts a phase and its timer; the caller holds no lock.
func (d *watchdog) enter(phase string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.enterLocked(phase)
}

func (d *watchdog) enterLocked(phase string) {
	if d.stopped || d.fired != nil {
		return
	}
	d.phase = phase
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if limit := d.limit(phase); limit > 0 {
		d.last = time.Now()
		d.timer = time.AfterFunc(limit, func() { d.expire(phase) })
	}
}

func (d *watchdog) limit(phase string) time.Duration {
	switch phase {
	case phaseConnect:
		return d.limits.Connect
	case phaseFirstByte:
		return d.limits.FirstByte
	case phaseIdle:
		return d.limits.Idle
	}
	return 0
}

// connected ends the connect phase. A connection got again (the transport
// retrying on a fresh one) changes nothing.
func (d *watchdog) connected() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.phase == phaseConnect {
		d.enterLocked(phaseFirstByte)
	}
}

// progress records a part of the answer: the first ends the first-byte
// phase, each restarts the idle one.
func (d *watchdog) progress() {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch d.phase {
	case phaseConnect, phaseFirstByte:
		d.enterLocked(phaseIdle)
	case phaseIdle:
		d.last = time.Now()
	}
}

// expire runs when the timer of phase fires.
func (d *watchdog) expire(phase string) {
	d.mu.Lock()
	if d.phase != phase || d.fired != nil || d.stopped {
		d.mu.Unlock()
		return
	}
	limit := d.limit(phase)
	if left := limit - time.Since(d.last); phase == phaseIdle && left > 0 {
		d.timer = time.AfterFunc(left, func() { d.expire(phase) })
		d.mu.Unlock()
		return
	}
	d.fired = d.w.timeoutError(phase, d.url, limit)
	d.mu.Unlock()
	d.cancel()
}

// expired returns the error of the timeout that fired, nil when none did.
func (d *watchdog) expired() *provider.Error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.fired
}

// stop ends the watch and releases the request's context.
func (d *watchdog) stop() {
	d.mu.Lock()
	d.stopped = true
	if d.timer != nil {
		d.timer.Stop()
	}
	d.mu.Unlock()
	d.cancel()
}

// timeoutError is the one line a timeout fails with: which timeout, the
// URL, the limit. It is Retryable, as a dropped connection is.
func (w *Client) timeoutError(phase, url string, limit time.Duration) *provider.Error {
	var what string
	switch phase {
	case phaseConnect:
		what = fmt.Sprintf("no connection to %s within %s", url, limit)
	case phaseFirstByte:
		what = fmt.Sprintf("no answer from %s within %s", url, limit)
	default:
		what = fmt.Sprintf("the stream from %s stalled for %s", url, limit)
	}
	return w.Fail(true, "%s timeout: %s", phase, what)
}

// watchedBody is an answer's body under its watchdog: a read the watchdog
// cut fails with the timeout's error, a JSON answer's bytes are progress
// (an event stream's progress is its reader's to judge), and Close ends
// the watch.
type watchedBody struct {
	io.ReadCloser
	dog  *watchdog
	json bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && b.json {
		b.dog.progress()
	}
	if err != nil && err != io.EOF {
		if perr := b.dog.expired(); perr != nil {
			return n, perr
		}
	}
	return n, err
}

func (b *watchedBody) Close() error {
	b.dog.stop()
	return b.ReadCloser.Close()
}
