package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/tool"
)

// fetchOpts are the options of the tests' web_fetch: nothing beyond
// loopback is ever dialed, even if the address check were broken.
func fetchOpts(o Options) Options {
	o.loopbackOnly = true
	return o
}

func fetch(t *testing.T, o Options, url string) (string, bool) {
	t.Helper()
	res := run(t, NewWebFetch(fetchOpts(o)), mustJSON(t, map[string]string{"url": url}))
	return res.Content, res.IsError
}

func TestWebFetchHTML(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>T</title><style>p{color:red}</style><script>alert("x")</script></head>
<body><h1>Release notes</h1><p>Fixed <b>three</b> bugs; see <a href="/bugs">the list</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`)
	}))
	defer srv.Close()
	got, isErr := fetch(t, Options{}, srv.URL+"/notes")
	if isErr {
		t.Fatalf("error result: %s", got)
	}
	for _, want := range []string{
		"URL: " + srv.URL + "/notes\n",
		"Status: 200 OK\n",
		"# Release notes",
		"Fixed **three** bugs; see [the list](/bugs).",
		"- one\n- two",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"<p>", "alert(", "color:red"} {
		if strings.Contains(got, not) {
			t.Errorf("result holds %q:\n%s", not, got)
		}
	}
}

func TestWebFetchStatusAndText(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.Error(w, "no such page", http.StatusNotFound)
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"a":1}`)
		case "/bin":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte{0x89, 'P', 'N', 'G', 0, 0})
		}
	}))
	defer srv.Close()
	got, isErr := fetch(t, Options{}, srv.URL+"/missing")
	if !isErr || !strings.Contains(got, "Status: 404 Not Found") || !strings.Contains(got, "no such page") {
		t.Errorf("404: error %v, %q", isErr, got)
	}
	got, isErr = fetch(t, Options{}, srv.URL+"/json")
	if isErr || !strings.HasSuffix(got, "\n\n{\"a\":1}") {
		t.Errorf("json: error %v, %q", isErr, got)
	}
	got, isErr = fetch(t, Options{}, srv.URL+"/bin")
	if !isErr || !strings.Contains(got, "[not text: image/png, 6 bytes not shown]") {
		t.Errorf("binary: error %v, %q", isErr, got)
	}
	for _, bad := range []string{"file:///etc/passwd", "ftp://x/y", "/relative", "http://"} {
		got, isErr = fetch(t, Options{}, bad)
		if !isErr || !strings.Contains(got, "want an absolute http or https URL") {
			t.Errorf("%s: error %v, %q", bad, isErr, got)
		}
	}
}

// redirector redirects /r/N to /r/N-1 and /r/0 to /done.
func redirector() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n int
		if _, err := fmt.Sscanf(r.URL.Path, "/r/%d", &n); err == nil {
			next := "/done"
			if n > 0 {
				next = fmt.Sprintf("/r/%d", n-1)
			}
			http.Redirect(w, r, next, http.StatusFound)
			return
		}
		fmt.Fprint(w, "arrived")
	}))
}

func TestWebFetchRedirectsBounded(t *testing.T) {
	t.Parallel()
	srv := redirector()
	defer srv.Close()
	// /r/2 takes three redirects.
	got, isErr := fetch(t, Options{MaxRedirects: 3}, srv.URL+"/r/2")
	if isErr || !strings.Contains(got, "URL: "+srv.URL+"/done\n") || !strings.HasSuffix(got, "arrived") {
		t.Errorf("three redirects with a bound of 3: error %v, %q", isErr, got)
	}
	got, isErr = fetch(t, Options{MaxRedirects: 2}, srv.URL+"/r/2")
	if !isErr || !strings.Contains(got, "stopped after 2 redirects") {
		t.Errorf("three redirects with a bound of 2: error %v, %q", isErr, got)
	}
	got, isErr = fetch(t, Options{}, srv.URL+"/r/1000")
	if !isErr || !strings.Contains(got, fmt.Sprintf("stopped after %d redirects", DefaultMaxRedirects)) {
		t.Errorf("endless redirects: error %v, %q", isErr, got)
	}
	got, isErr = fetch(t, Options{MaxRedirects: -1}, srv.URL+"/r/0")
	if !isErr || !strings.Contains(got, "stopped after 0 redirects") {
		t.Errorf("no redirects allowed: error %v, %q", isErr, got)
	}
}

func TestForbiddenAddr(t *testing.T) {
	t.Parallel()
	for addr, forbidden := range map[string]bool{
		"169.254.169.254":        true,
		"169.254.0.1":            true,
		"::ffff:169.254.169.254": true,
		"fd00:ec2::254":          true,
		"fe80::1":                true,
		"127.0.0.1":              false,
		"::1":                    false,
		"10.0.0.1":               false,
		"192.168.1.1":            false,
		"fd00:ec2::253":          false,
		"8.8.8.8":                false,
	} {
		if got := ForbiddenAddr(netip.MustParseAddr(addr), false) != ""; got != forbidden {
			t.Errorf("ForbiddenAddr(%s) forbids: %v, want %v", addr, got, forbidden)
		}
	}
}

// TestWebFetchMetadataRefused performs the attack on the real metadata
// addresses: by URL, by a redirect from an allowed server, and by a host
// name whose DNS answer is a metadata address. Each is refused at the dial,
// before any packet leaves (and loopbackOnly guarantees that nothing
// beyond loopback would be reached if the check failed: the test would see
// the loopback error instead of the refusal).
func TestWebFetchMetadataRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer srv.Close()
	resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "metadata.test":
			return []netip.Addr{netip.MustParseAddr("169.254.169.254")}, nil
		case "metadata6.test":
			return []netip.Addr{netip.MustParseAddr("fd00:ec2::254")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	o := Options{Resolver: resolver}
	for _, url := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://[fd00:ec2::254]/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/",
		srv.URL + "/?to=http://169.254.169.254/latest/meta-data/",
		srv.URL + "/?to=http://metadata.test/latest/meta-data/",
		"http://metadata.test/latest/meta-data/",
		"http://metadata6.test:8080/",
	} {
		got, isErr := fetch(t, o, url)
		if !isErr || !strings.Contains(got, "web_fetch: refused to connect to ") ||
			!strings.Contains(got, "never fetched, by URL, redirect or DNS") {
			t.Errorf("%s: error %v, %q", url, isErr, got)
		}
	}
}

// TestWebFetchAddressCheckIsTheGuard runs the same three attacks against a
// loopback server on 127.0.0.2, made forbidden for the test: refused with
// the check, and (the control) fetched without it.
func TestWebFetchAddressCheckIsTheGuard(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	target := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "instance credentials")
	}))
	target.Listener.Close()
	target.Listener = ln
	target.Start()
	defer target.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	hop := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	defer hop.Close()
	resolver := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "creds.test" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	forbid2 := func(a netip.Addr) string {
		if a == netip.MustParseAddr("127.0.0.2") {
			return "forbidden for the test"
		}
		return ""
	}
	urls := []string{
		target.URL + "/",
		hop.URL + "/?to=" + target.URL + "/",
		fmt.Sprintf("http://creds.test:%d/", port),
		hop.URL + fmt.Sprintf("/?to=http://creds.test:%d/", port),
	}
	for _, url := range urls {
		got, isErr := fetch(t, Options{Resolver: resolver, forbidden: forbid2}, url)
		if !isErr || !strings.Contains(got, "refused to connect to 127.0.0.2: forbidden for the test") || strings.Contains(got, "instance credentials") {
			t.Errorf("guard on, %s: error %v, %q", url, isErr, got)
		}
		got, isErr = fetch(t, Options{Resolver: resolver, forbidden: func(netip.Addr) string { return "" }}, url)
		if isErr || !strings.Contains(got, "instance credentials") {
			t.Errorf("guard off (control), %s: error %v, %q", url, isErr, got)
		}
	}
}

func TestWebFetchHugeBodyCut(t *testing.T) {
	t.Parallel()
	const huge = 64 << 20 // never sent whole: the reader stops at the cap
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		chunk := []byte(strings.Repeat("y", 1<<16))
		for sent := 0; sent < huge; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	got, isErr := fetch(t, Options{MaxFetchBytes: 1000, MaxResultBytes: 1 << 20}, srv.URL)
	if isErr {
		t.Fatalf("error result: %.200s", got)
	}
	if !strings.Contains(got, "Note: the body was cut at 1000 bytes\n") {
		t.Errorf("no note of the cut: %.300s", got)
	}
	_, body, _ := strings.Cut(got, "\n\n")
	if len(body) != 1000 {
		t.Errorf("body of %d bytes, want 1000", len(body))
	}
}

func TestWebFetchSlowServerTimedOut(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/trickle" {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "first part ")
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	o := Options{FetchTimeout: 200 * time.Millisecond}
	got, isErr := fetch(t, o, srv.URL+"/hang")
	if !isErr || !strings.Contains(got, "web_fetch: timed out after 200ms") {
		t.Errorf("no headers: error %v, %q", isErr, got)
	}
	got, isErr = fetch(t, o, srv.URL+"/trickle")
	if !isErr || !strings.Contains(got, "timed out after 200ms while reading the body (11 bytes read)") {
		t.Errorf("a body that never ends: error %v, %q", isErr, got)
	}
}

func TestWebFetchCancelled(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { time.Sleep(50 * time.Millisecond); cancel() }()
	res, err := NewWebFetch(fetchOpts(Options{})).Run(ctx, []byte(mustJSON(t, map[string]string{"url": srv.URL})))
	if err == nil && !res.IsError {
		t.Errorf("a cancelled fetch succeeded: %q", res.Content)
	}
}

// TestWebFetchDestinations: the interlock judges a web_fetch call by its
// URL's host alone; input that names no absolute http or https URL is an
// error, so the interlock falls back to every host the input names.
func TestWebFetchDestinations(t *testing.T) {
	t.Parallel()
	wf := NewWebFetch(Options{}).(tool.CallDestinations)
	got, err := wf.DestinationsOf(json.RawMessage(`{"url":"https://WWW.Example.com:8443/a?next=evil.example.org"}`))
	if err != nil || len(got) != 1 || got[0] != "WWW.Example.com" {
		t.Errorf("DestinationsOf = %q, %v", got, err)
	}
	if d := tool.DestinationsOf(NewWebFetch(Options{}), json.RawMessage(`{"url":"https://www.example.com/?next=evil.example.org"}`)); len(d) != 1 || d[0] != "example.com" {
		t.Errorf("tool.DestinationsOf = %q", d)
	}
	for _, in := range []string{`{"url":"www.example.com"}`, `{"url":"ftp://example.com/"}`, `{}`, `[`} {
		if got, err := wf.DestinationsOf(json.RawMessage(in)); err == nil {
			t.Errorf("DestinationsOf(%s) = %q, want an error", in, got)
		}
	}
}
