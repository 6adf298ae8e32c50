package provider_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
)

// scripted answers Complete with the next of its errors, then succeeds.
type scripted struct {
	errs  []error
	calls int
}

func (s *scripted) Name() string         { return "fake" }
func (s *scripted) DefaultModel() string { return "fake-1" }
func (s *scripted) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	s.calls++
	if s.calls <= len(s.errs) {
		return nil, s.errs[s.calls-1]
	}
	return &provider.Response{StopReason: provider.StopEndTurn}, nil
}

func retryable(after time.Duration) error {
	return &provider.Error{Provider: "fake", Status: 429, Message: "slow down", Retryable: true, RetryAfter: after}
}

func TestWithRetry(t *testing.T) {
	t.Parallel()
	fatal := &provider.Error{Provider: "fake", Status: 400, Message: "bad request"}
	plain := errors.New("fake: boom")
	tests := []struct {
		name      string
		errs      []error
		opts      provider.RetryOptions
		wantCalls int
		wantWaits []time.Duration
		wantErr   string // substring; empty means success
	}{
		{name: "success at once", wantCalls: 1},
		{
			name:      "exponential backoff without jitter",
			errs:      []error{retryable(0), retryable(0), retryable(0)},
			wantCalls: 4,
			wantWaits: []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second},
		},
		{
			name:      "retry-after honoured and capped",
			errs:      []error{retryable(3 * time.Second), retryable(10 * time.Minute)},
			wantCalls: 3,
			wantWaits: []time.Duration{3 * time.Second, time.Minute},
		},
		{
			name:      "backoff capped",
			errs:      []error{retryable(0), retryable(0), retryable(0)},
			opts:      provider.RetryOptions{BaseDelay: 20 * time.Second},
			wantCalls: 4,
			wantWaits: []time.Duration{20 * time.Second, 30 * time.Second, 30 * time.Second},
		},
		{
			name:      "gives up after MaxAttempts",
			errs:      []error{retryable(0), retryable(0), retryable(0)},
			opts:      provider.RetryOptions{MaxAttempts: 2},
			wantCalls: 2,
			wantWaits: []time.Duration{500 * time.Millisecond},
			wantErr:   "fake: HTTP 429: slow down (gave up after 2 attempts)",
		},
		{
			name:      "non-retryable provider error",
			errs:      []error{fatal},
			wantCalls: 1,
			wantErr:   "fake: HTTP 400: bad request",
		},
		{
			name:      "other error",
			errs:      []error{plain},
			wantCalls: 1,
			wantErr:   "fake: boom",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &scripted{errs: tt.errs}
			var waits, notified []time.Duration
			opts := tt.opts
			opts.Rand = func() float64 { return 0.999999999 } // the top of the jitter range
			opts.Sleep = func(ctx context.Context, d time.Duration) error {
				waits = append(waits, d)
				return nil
			}
			opts.OnRetry = func(attempt int, err error, wait time.Duration) {
				if attempt != len(notified)+1 {
					t.Errorf("OnRetry attempt = %d, want %d", attempt, len(notified)+1)
				}
				notified = append(notified, wait)
			}
			_, err := provider.WithRetry(p, opts).Complete(context.Background(), &provider.Request{})
			if tt.wantErr == "" && err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
			}
			if p.calls != tt.wantCalls {
				t.Errorf("calls = %d, want %d", p.calls, tt.wantCalls)
			}
			if len(waits) != len(tt.wantWaits) {
				t.Fatalf("waits = %v, want %v", waits, tt.wantWaits)
			}
			for i := range waits {
				if d := waits[i] - tt.wantWaits[i]; d < -time.Millisecond || d > time.Millisecond {
					t.Errorf("wait %d = %v, want %v", i, waits[i], tt.wantWaits[i])
				}
				if notified[i] != waits[i] {
					t.Errorf("OnRetry wait %d = %v, slept %v", i, notified[i], waits[i])
				}
			}
		})
	}
}

func TestWithRetryJitterRange(t *testing.T) {
	t.Parallel()
	var waits []time.Duration
	p := &scripted{errs: []error{retryable(0)}}
	opts := provider.RetryOptions{
		Rand:  func() float64 { return 0 },
		Sleep: func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil },
	}
	if _, err := provider.WithRetry(p, opts).Complete(context.Background(), &provider.Request{}); err != nil {
		t.Fatal(err)
	}
	if len(waits) != 1 || waits[0] != 250*time.Millisecond {
		t.Errorf("waits = %v, want [250ms] (half the base delay at the bottom of the jitter)", waits)
	}
}

func TestWithRetryCancelStopsWaiting(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	p := &scripted{errs: []error{retryable(time.Hour), retryable(0)}}
	opts := provider.RetryOptions{OnRetry: func(int, error, time.Duration) { cancel() }}
	// Without the cancel the retry would wait an hour: the test's own
	// deadline, not a clock here, catches that.
	_, err := provider.WithRetry(p, opts).Complete(ctx, &provider.Request{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	var perr *provider.Error
	if !errors.As(err, &perr) || perr.Status != 429 {
		t.Errorf("error %v does not wrap the provider error", err)
	}
	if p.calls != 1 {
		t.Errorf("%d calls after the cancel, want 1", p.calls)
	}
}

func TestWithRetryDelegates(t *testing.T) {
	t.Parallel()
	p := provider.WithRetry(&scripted{}, provider.RetryOptions{})
	if p.Name() != "fake" || p.DefaultModel() != "fake-1" {
		t.Errorf("Name, DefaultModel = %q, %q", p.Name(), p.DefaultModel())
	}
	u, ok := p.(interface{ Unwrap() provider.Provider })
	if !ok || u.Unwrap().Name() != "fake" {
		t.Error("WithRetry's provider does not unwrap")
	}
}

func TestErrorNamesProvider(t *testing.T) {
	t.Parallel()
	if !strings.Contains((&provider.Error{Provider: "x", Message: "m"}).Error(), "x: m") {
		t.Error("Error() does not name the provider")
	}
}
