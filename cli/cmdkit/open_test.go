package cmdkit

import (
	"slices"
	"testing"
)

func TestOpener(t *testing.T) {
	for _, c := range []struct {
		browser, goos string
		want          []string
	}{
		{"", "linux", []string{"xdg-open", "/v/a.html"}},
		{"", "darwin", []string{"open", "/v/a.html"}},
		{"firefox --new-tab", "linux", []string{"firefox", "--new-tab", "/v/a.html"}},
		{"w3m %s -dump:lynx", "darwin", []string{"w3m", "/v/a.html", "-dump"}},
	} {
		env := &Env{GOOS: c.goos, Vars: func(k string) string {
			if k == "BROWSER" {
				return c.browser
			}
			return ""
		}}
		if got := env.Opener("/v/a.html"); !slices.Equal(got, c.want) {
			t.Errorf("BROWSER=%q on %s: %q, want %q", c.browser, c.goos, got, c.want)
		}
	}
}
