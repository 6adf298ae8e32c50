package tool

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// Answer is a person's answer to a question about a call: allowed or
// not, and, for a denial, what they said to the model about it.
type Answer struct {
	Allow bool
	// Reason, for a denial, is sent to the model with the denial.
	Reason string
}

// Answerer is an Asker that can give a denial's reason (the chat's:
// n, then a sentence). The gate and the interlock ask an Answerer through
// Answer, any other Asker through Confirm.
type Answerer interface {
	Asker
	Answer(ctx context.Context, req Request) (Answer, error)
}

// ask puts req to a, timing the wait on ctx's WaitMeter (the person's
// time, which a call's duration leaves out).
func ask(ctx context.Context, a Asker, req Request) (Answer, error) {
	if m, ok := ctx.Value(waitKey{}).(*WaitMeter); ok {
		start := m.now()
		defer func() { m.add(m.now().Sub(start)) }()
	}
	if an, ok := a.(Answerer); ok {
		return an.Answer(ctx, req)
	}
	ok, err := a.Confirm(ctx, req)
	return Answer{Allow: ok}, err
}

// withReason appends a denial's reason to msg, on one line.
func withReason(msg, reason string) string {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return msg
	}
	return msg + ". The user said: " + textfmt.Clip(reason, 2000)
}

// WaitMeter adds up the time a call spent waiting for a person's answer.
type WaitMeter struct {
	now    func() time.Time
	mu     sync.Mutex
	waited time.Duration
}

type waitKey struct{}

// WithWaitMeter returns ctx carrying a new WaitMeter, for one call, that
// reads the time from now (nil: time.Now).
func WithWaitMeter(ctx context.Context, now func() time.Time) (context.Context, *WaitMeter) {
	if now == nil {
		now = time.Now
	}
	m := &WaitMeter{now: now}
	return context.WithValue(ctx, waitKey{}, m), m
}

func (m *WaitMeter) add(d time.Duration) {
	m.mu.Lock()
	m.waited += d
	m.mu.Unlock()
}

// Waited is the time spent waiting for answers so far.
func (m *WaitMeter) Waited() time.Duration {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.waited
}
