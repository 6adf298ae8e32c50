package wire

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RetryableStatus reports whether an HTTP status is worth retrying: rate
// limits (429) and server errors, overloads (529) included.
func RetryableStatus(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// ParseRetryAfter reads a retry-after header value: a number of seconds
// (fractions allowed) or an HTTP date, taken relative to now. It returns zero
// for an empty, malformed or past value.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 || secs > 1e6 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// RetryAfterFromHeader reads the server's wait from retry-after-ms (sent by
// OpenAI) or retry-after, in that order.
func RetryAfterFromHeader(h http.Header, now time.Time) time.Duration {
	if ms := strings.TrimSpace(h.Get("Retry-After-Ms")); ms != "" {
		if n, err := strconv.ParseFloat(ms, 64); err == nil && n > 0 && n < 1e9 {
			return time.Duration(n * float64(time.Millisecond))
		}
	}
	return ParseRetryAfter(h.Get("Retry-After"), now)
}
