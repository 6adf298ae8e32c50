// Package browsertest loads a page in a real browser for the tests of
// mecha's HTML output: Debian's Chromium, driven by chromedp, with the
// network blocked, every request the page makes recorded and every one
// but the page's own failed. A test that finds no Chromium skips, saying
// so (tests only).
package browsertest

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium, or skips the test.
func Chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium found (apt-get install chromium); the browser tests need one")
	return ""
}

// Page is a browser tab that has loaded a file.
type Page struct {
	Ctx context.Context
	URL string
	// origin, when set, is a loopback server's whose requests are let
	// through (OpenServed).
	origin string

	mu       sync.Mutex
	requests []request
	dialogs  []string
	errors   []string
}

type request struct {
	id, url string
	csp     bool // blocked by the page's Content-Security-Policy
}

// Requests returns the URL of every request the page made, its own
// included, in order; not those its Content-Security-Policy blocked before
// they were made (Blocked).
func (p *Page) Requests() []string { return p.urls(false) }

// Blocked returns the URLs of the requests the page's policy blocked.
func (p *Page) Blocked() []string { return p.urls(true) }

func (p *Page) urls(csp bool) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.requests {
		if r.csp == csp {
			out = append(out, r.url)
		}
	}
	return out
}

// Dialogs returns the messages of the alert, confirm and prompt dialogs
// the page opened (each dismissed).
func (p *Page) Dialogs() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.dialogs...)
}

// Errors returns the exceptions the page's scripts threw and the console
// errors it logged (a Content-Security-Policy violation is one).
func (p *Page) Errors() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.errors...)
}

// Open starts a headless Chromium with no network (a dead proxy, every
// host name unresolvable, background networking off) and loads the file
// at path from its file:// URL. Every request is recorded; every one but
// the page's own is failed before it leaves. The browser is closed at the
// end of the test. The timeout only keeps a wedged browser from hanging
// the suite; nothing is measured against it.
func Open(t *testing.T, path string) *Page {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return open(t, &Page{URL: (&url.URL{Scheme: "file", Path: abs}).String()}, 2*time.Minute)
}

// OpenServed serves dir from a loopback HTTP server for the test and
// loads its index, followed by at (a fragment, "#/logs/x.json", or ""),
// as Open loads a file: a page that is an application (scripts and data
// fetched beside it, such as Inspect's log viewer). Requests to the
// server are let through; every other is failed. Such a page is heavier:
// the browser is given five minutes rather than two.
func OpenServed(t *testing.T, dir, at string) *Page {
	t.Helper()
	Chromium(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return open(t, &Page{URL: srv.URL + "/" + at, origin: srv.URL + "/"}, 5*time.Minute)
}

func open(t *testing.T, p *Page, timeout time.Duration) *Page {
	t.Helper()
	bin := Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("no-first-run", true),
		chromedp.ProxyServer("http://127.0.0.1:9"),
		chromedp.UserDataDir(t.TempDir()),
		// chromedp gives a browser 20 s to print its DevTools address; a
		// loaded two-core machine starting two at once can take longer.
		chromedp.WSURLReadTimeout(90*time.Second),
	)
	if p.origin == "" {
		// Loopback too goes to the dead proxy, and no name resolves.
		opts = append(opts, chromedp.Flag("proxy-bypass-list", "<-loopback>"), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"))
	} else {
		// The test's server on 127.0.0.1 alone is reached.
		opts = append(opts, chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(acancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	p.Ctx = bctx
	if err := chromedp.Listen(bctx, p.listen); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	if _, err := chromedp.Call(bctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(bctx, fetch.Enable, fetch.EnableParams{Patterns: []*fetch.RequestPattern{{URLPattern: "*"}}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx, chromedp.Navigate(p.URL), chromedp.WaitReady(chromedp.CSS("body"))); err != nil {
		t.Fatalf("loading %s: %v", p.URL, err)
	}
	return p
}

func (p *Page) listen(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, request{id: string(ev.RequestID), url: ev.Request.URL})
	case *network.EventLoadingFailed:
		for i := range p.requests {
			if p.requests[i].id == string(ev.RequestID) && ev.BlockedReason == network.BlockedReasonCsp {
				p.requests[i].csp = true
			}
		}
	case *fetch.EventRequestPaused:
		own := ev.Request.URL == p.URL || p.origin != "" && strings.HasPrefix(ev.Request.URL, p.origin)
		// Listen's function may not run commands: answer from another
		// goroutine.
		go func() {
			if own {
				chromedp.Call(p.Ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
				return
			}
			chromedp.Call(p.Ctx, fetch.FailRequest, fetch.FailRequestParams{RequestID: ev.RequestID, ErrorReason: network.ErrorReasonBlockedByClient})
		}()
	case *page.EventJavascriptDialogOpening:
		p.dialogs = append(p.dialogs, ev.Message)
		go chromedp.Call(p.Ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
	case *runtime.EventExceptionThrown:
		p.errors = append(p.errors, ev.ExceptionDetails.Text)
	case *runtime.EventConsoleAPICalled:
		if string(ev.Type) == "error" {
			p.errors = append(p.errors, "console.error")
		}
	}
}

// Eval evaluates a JavaScript expression in the page (awaiting it when
// it is a promise).
func Eval[T any](t *testing.T, p *Page, expr string) T {
	t.Helper()
	v, err := chromedp.Run(p.Ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Click clicks the first element matching a CSS selector.
func (p *Page) Click(t *testing.T, selector string) {
	t.Helper()
	if err := chromedp.Do(p.Ctx, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible)); err != nil {
		t.Fatalf("click %s: %v", selector, err)
	}
}

// Visible reports whether the first element matching selector is
// rendered: in a closed <details>, or under display:none, it is not.
func (p *Page) Visible(t *testing.T, selector string) bool {
	t.Helper()
	return Eval[bool](t, p, `(function(){var e=document.querySelector(`+quote(selector)+`);return !!e && e.checkVisibility()})()`)
}

func quote(s string) string {
	b := []byte{'"'}
	for _, c := range []byte(s) {
		if c == '"' || c == '\\' {
			b = append(b, '\\')
		}
		b = append(b, c)
	}
	return string(append(b, '"'))
}

// FollowLink clicks, as a user would, the first element matching selector:
// a link that opens a new tab. It returns the tab's URL and the text it
// shows once loaded. The click is a navigation, not a request of the
// page: the page's Requests do not change.
func (p *Page) FollowLink(t *testing.T, selector string) (url, text string) {
	t.Helper()
	ch := chromedp.WaitNewTarget(p.Ctx, func(info *target.Info) bool {
		return info.Type == "page" && info.URL != "" && info.URL != "about:blank"
	})
	p.Click(t, selector)
	var id target.ID
	select {
	case id = <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("clicking %s opened no tab", selector)
	}
	tctx, cancel := chromedp.NewContext(p.Ctx, chromedp.WithTargetID(id))
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.WaitReady("body")); err != nil {
		t.Fatalf("the tab opened by %s: %v", selector, err)
	}
	url, err := chromedp.Run(tctx, chromedp.Evaluate[string](`document.URL`))
	if err == nil {
		text, err = chromedp.Run(tctx, chromedp.Evaluate[string](`document.body.textContent`))
	}
	if err != nil {
		t.Fatalf("the tab opened by %s: %v", selector, err)
	}
	return url, text
}
