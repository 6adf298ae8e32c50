package providertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
)

// TestWrongContentType: a 200 answer that is neither an event stream nor
// JSON (a captive portal's login page, a proxy's notice) fails at once,
// not retried, in one line that names the URL, the status, the content
// type and the start of the body, the key redacted.
func TestWrongContentType(t *testing.T) {
	t.Parallel()
	page := `<!DOCTYPE html>\n<html>\n  <head><title>Hotel WiFi: log in</title></head>\n  <body>Your key ` + testKey + ` is not needed here. ` + strings.Repeat("Lorem ipsum. ", 40) + `</body>\n</html>\n`
	tests := []struct {
		name, turn, want string
	}{
		{"captive portal", `{"body":"` + page + `","content_type":"text/html; charset=utf-8"}`,
			`HTTP 200: URL answered text/html; charset=utf-8, not an event stream or JSON: <!DOCTYPE html> <html> <head><title>Hotel WiFi: log in</title></head> <body>Your key [redacted] is n...`},
		{"plain text", `{"body":"upstream connect error","content_type":"text/plain"}`,
			`HTTP 200: URL answered text/plain, not an event stream or JSON: upstream connect error`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEach(t, func(t *testing.T, f flavour) {
				if f.key == "" {
					f.key = testKey // a local server with a key, to see it redacted
				}
				p, srv := f.start(t, `{"turns":[`+tt.turn+`]}`)
				retries := 0
				rp := provider.WithRetry(p, provider.RetryOptions{
					Sleep:   func(context.Context, time.Duration) error { return nil },
					OnRetry: func(int, error, time.Duration) { retries++ },
				})
				_, _, err := ask(rp, nil)
				perr := asError(t, err)
				want := f.provider + ": " + strings.Replace(tt.want, "URL", f.endpoint(srv), 1)
				if err.Error() != want || perr.Retryable || perr.Status != 200 {
					t.Errorf("error = %q %#v\nwant %q, not retryable", err, perr, want)
				}
				if n := len(srv.Requests()); retries != 0 || n != 1 {
					t.Errorf("%d retries, %d requests: want none, 1", retries, n)
				}
			})
		})
	}
}
