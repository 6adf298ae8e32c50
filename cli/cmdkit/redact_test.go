package cmdkit

import (
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                              "",
		"https://mcp.example.com/x":     "https://mcp.example.com/x",
		"https://bob:pw@h/x":            "https://bob:<redacted>@h/x",
		"https://bob@h/x":               "https://bob@h/x",
		"https://a:b@h":                 "https://a:<redacted>@h",
		"https://h/p/q@r:s":             "https://h/p/q@r:s",
		"https://h/x?token=t1&a=2#frag": "https://h/x?a=<redacted>&token=<redacted>#<redacted>",
		"https://h/x?%zz":               "https://h/x?%zz=<redacted>",
		"http://127.0.0.1:8080":         "http://127.0.0.1:8080",
		"https://${U}:${P}@h/${PATH}":   "https://${U}:<redacted>@h/${PATH}",
		"host:8080":                     "host:8080",
	} {
		got := RedactURL(in)
		if got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	t.Parallel()
	got := RedactArgs([]string{"serve", "--token", "t1", "--api-key=k1", "-v", "--client-secret", "s1", "--port", "8", "--password"})
	want := "serve --token <redacted> --api-key=<redacted> -v --client-secret <redacted> --port 8 --password"
	if strings.Join(got, " ") != want {
		t.Errorf("RedactArgs = %q, want %q", got, want)
	}
	got = RedactArgs([]string{"--db-pass", "p1", "--auth=a1", "--private-key", "k1", "--session-cookie=c1", "--ssh-auth-sock", "/s", "--session-type", "x11"})
	want = "--db-pass <redacted> --auth=<redacted> --private-key <redacted> --session-cookie=<redacted> --ssh-auth-sock /s --session-type x11"
	if strings.Join(got, " ") != want {
		t.Errorf("RedactArgs = %q, want %q", got, want)
	}
	if RedactArgs(nil) != nil {
		t.Error("RedactArgs(nil) is not nil")
	}
}

func TestRedactURLsIn(t *testing.T) {
	t.Parallel()
	in := `Post "https://bob:***@h.example/x?key=abc&mode=1": dial tcp: lookup h.example: no such host; see http://h/doc`
	want := `Post "https://bob:<redacted>@h.example/x?key=<redacted>&mode=<redacted>": dial tcp: lookup h.example: no such host; see http://h/doc`
	if got := RedactURLsIn(in); got != want {
		t.Errorf("RedactURLsIn:\n got %s\nwant %s", got, want)
	}
}
