package provider

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Retry defaults, used when the matching RetryOptions field is zero.
const (
	DefaultMaxAttempts   = 5
	DefaultBaseDelay     = 500 * time.Millisecond
	DefaultMaxDelay      = 30 * time.Second
	DefaultMaxRetryAfter = 60 * time.Second
)

// RetryOptions configures WithRetry. The zero value retries with the defaults
// above, sleeping for real.
type RetryOptions struct {
	// MaxAttempts is the total number of attempts, the first included.
	// Zero means DefaultMaxAttempts; 1 disables retrying.
	MaxAttempts int
	// BaseDelay is the wait before the first retry; it doubles with every
	// further retry up to MaxDelay. Jitter draws the actual wait between half
	// the computed delay and the whole of it.
	BaseDelay time.Duration
	MaxDelay  time.Duration
	// MaxRetryAfter caps a server's retry-after, which otherwise replaces
	// the computed backoff.
	MaxRetryAfter time.Duration
	// Sleep waits d or until ctx is done, whichever comes first, and returns
	// ctx.Err() in the latter case. Nil means a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for jitter. Nil means math/rand/v2.
	Rand func() float64
	// OnRetry, when set, is called before each wait with the number of the
	// attempt that failed (1 for the first), its error and the wait ahead.
	OnRetry func(attempt int, err error, wait time.Duration)
}

// WithRetry returns a Provider that retries p's Complete when it fails with
// a *Error whose Retryable is set, waiting between attempts with exponential
// backoff and jitter, or for the server's RetryAfter when it gave one. Any
// other error, and the cancellation of the context, end the call at once.
// When every attempt fails, the last error is returned, wrapped so that
// errors.As still finds the *Error.
//
// A retried request streams again from the start: OnDelta may see the
// beginning of an answer twice.
func WithRetry(p Provider, opts RetryOptions) Provider {
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = DefaultBaseDelay
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = DefaultMaxDelay
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Rand == nil {
		opts.Rand = rand.Float64
	}
	return &retrying{p: p, opts: opts}
}

type retrying struct {
	p    Provider
	opts RetryOptions
}

func (r *retrying) Name() string         { return r.p.Name() }
func (r *retrying) DefaultModel() string { return r.p.DefaultModel() }

// Unwrap returns the provider being retried.
func (r *retrying) Unwrap() Provider { return r.p }

func (r *retrying) Complete(ctx context.Context, req *Request) (*Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := r.p.Complete(ctx, req)
		if err == nil {
			return resp, nil
		}
		var perr *Error
		if !errors.As(err, &perr) || !perr.Retryable || ctx.Err() != nil {
			return nil, err
		}
		if attempt >= r.opts.MaxAttempts {
			if attempt == 1 {
				return nil, err
			}
			return nil, fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		wait := r.backoff(attempt, perr.RetryAfter)
		if r.opts.OnRetry != nil {
			r.opts.OnRetry(attempt, err, wait)
		}
		if serr := r.opts.Sleep(ctx, wait); serr != nil {
			return nil, fmt.Errorf("%w (while waiting to retry: %w)", err, serr)
		}
	}
}

// backoff returns the wait after the given failed attempt.
func (r *retrying) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, r.opts.MaxRetryAfter)
	}
	d := r.opts.BaseDelay
	for i := 1; i < attempt && d < r.opts.MaxDelay; i++ {
		d *= 2
	}
	d = min(d, r.opts.MaxDelay)
	half := d / 2
	return half + time.Duration(r.opts.Rand()*float64(d-half))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
