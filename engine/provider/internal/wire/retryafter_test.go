package wire

import (
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"2", 2 * time.Second},
		{" 1.5 ", 1500 * time.Millisecond},
		{"0", 0},
		{"-3", 0},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	}
	for _, tt := range tests {
		if got := ParseRetryAfter(tt.in, now); got != tt.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	h := http.Header{}
	h.Set("Retry-After", "7")
	h.Set("Retry-After-Ms", "1250")
	if got := RetryAfterFromHeader(h, now); got != 1250*time.Millisecond {
		t.Errorf("RetryAfterFromHeader prefers retry-after-ms: got %v", got)
	}
	h.Del("Retry-After-Ms")
	if got := RetryAfterFromHeader(h, now); got != 7*time.Second {
		t.Errorf("RetryAfterFromHeader = %v, want 7s", got)
	}
}

func TestRetryableStatus(t *testing.T) {
	t.Parallel()
	for status, want := range map[int]bool{200: false, 400: false, 401: false, 404: false, 429: true, 500: true, 503: true, 529: true} {
		if got := RetryableStatus(status); got != want {
			t.Errorf("RetryableStatus(%d) = %v, want %v", status, got, want)
		}
	}
}
