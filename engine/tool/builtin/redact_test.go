package builtin

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
)

const cutCanary = "CANARY-cut-zqxjvkwyqzjxkvwy" // no digits: a fragment must not match a port in a URL

var cutSecrets = []tool.Secret{{Name: "DB_PASS", Value: cutCanary}}

// b64Canary is the part of b64.txt's base64 that encodes the canary alone
// (after 10 bytes: the second of the three alignments).
var b64Canary = base64.StdEncoding.EncodeToString([]byte(strings.Repeat("p", 10) + cutCanary + "\n"))[(8*10+5)/6 : 8*(10+len(cutCanary))/6]

// fragment returns the first piece of canary, 4 bytes or more, that text
// holds, in the clear or in base64 ("" when none): what a cut through a
// secret would leave.
func fragment(text, canary string) string {
	for _, s := range []string{canary, b64Canary} {
		for i := 0; i+4 <= len(s); i++ {
			if strings.Contains(text, s[i:i+4]) && !strings.Contains("[redacted DB_PASS]", s[i:i+4]) {
				return s[i : i+4]
			}
		}
	}
	return ""
}

// TestRedactBeforeCut: a secret printed, stored or served across the place
// where a tool cuts its output (the shell's head and tail, fs_read's byte
// limit on a long line, web_fetch's read limit) leaves no fragment. The
// control, without Secrets, shows each cut does fall inside the canary.
func TestRedactBeforeCut(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	const max = 200 // the shell keeps a head of 100 bytes and a tail of 100
	pad := func(n int, c string) string { return strings.Repeat(c, n) }
	b64 := base64.StdEncoding.EncodeToString([]byte(pad(10, "p") + cutCanary + "\n"))
	writeFiles(t, root, map[string]string{
		"head.txt": pad(90, "a") + cutCanary + pad(1000, "b"), // the head ends inside it
		"tail.txt": pad(1000, "a") + cutCanary + pad(90, "b"), // the tail begins inside it
		"b64.txt":  pad(90-len(b64)/2, "a") + b64 + pad(1000, "b"),
		"line.txt": pad(190, "a") + cutCanary + "\nnext\n", // fs_read cuts the first line at max
	})
	served := pad(190, "a") + cutCanary + pad(1000, "b")
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		body := served
		if r.URL.Path == "/result" {
			// the result's own cut at max bytes falls 10 bytes into the canary
			head := "URL: " + srv.URL + "/result\nStatus: 200 OK\nContent-Type: text/plain\n\n"
			body = pad(max-10-len(head), "a") + cutCanary + pad(1000, "b")
		}
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)

	cases := []struct {
		name  string
		tool  func(Options) tool.Tool
		input string
	}{
		{"shell head", func(o Options) tool.Tool { return NewShell(ws, o) }, `{"command":"cat head.txt"}`},
		{"shell tail", func(o Options) tool.Tool { return NewShell(ws, o) }, `{"command":"cat tail.txt"}`},
		{"shell base64", func(o Options) tool.Tool { return NewShell(ws, o) }, `{"command":"cat b64.txt"}`},
		{"fs_read", func(o Options) tool.Tool { return NewFSRead(ws, o) }, `{"path":"line.txt"}`},
		{"web_fetch read limit", func(o Options) tool.Tool {
			o.MaxResultBytes = 1 << 20
			return NewWebFetch(fetchOpts(o))
		}, mustJSON(t, map[string]string{"url": srv.URL})},
		{"web_fetch result limit", func(o Options) tool.Tool {
			o.MaxFetchBytes = 1 << 20
			return NewWebFetch(fetchOpts(o))
		}, mustJSON(t, map[string]string{"url": srv.URL + "/result"})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := Options{MaxResultBytes: max, MaxFetchBytes: 200}
			control := run(t, c.tool(o), c.input).Content
			if fragment(control, cutCanary) == "" || strings.Contains(control, cutCanary) {
				t.Fatalf("control: the cut does not fall inside the canary: %q", control)
			}
			o.Secrets = cutSecrets
			got := run(t, c.tool(o), c.input).Content
			if f := fragment(got, cutCanary); f != "" {
				t.Errorf("a fragment %q of the canary is left: %q", f, got)
			}
			// Redacting the cut result, as the decorator alone did, leaves it.
			if after := tool.NewRedactor(cutSecrets).Replace(control); fragment(after, cutCanary) == "" {
				t.Errorf("control: redacting after the cut leaves no fragment either: %q", after)
			}
		})
	}
}
