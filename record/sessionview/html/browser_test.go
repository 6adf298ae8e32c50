package html

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/testkit/browsertest"
)

// TestPageInBrowser loads the fixture's page in Chromium from its file
// URL with the network blocked: nothing but the file is requested, no
// dialog opens, no error is logged (the policy lets the page's script
// run), and what is shown is the session: its title, a message, the armed
// mark in the taint band. A call is folded until clicked; then its result
// shows. "expand all" opens every call.
func TestPageInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	p := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(p, []byte(render(t, fixture, Options{})), 0o600); err != nil {
		t.Fatal(err)
	}
	pg := browsertest.Open(t, p)
	if title := browsertest.Eval[string](t, pg, `document.title`); title != "mecha session 20260805T091500-3f2a1b7c · why does the build <b>fail</b>?" {
		t.Errorf("title %q", title)
	}
	if first := browsertest.Eval[string](t, pg, `document.querySelector(".user pre").innerText`); first != "why does the build fail? ``` the log says <script>alert(1)</script>" {
		t.Errorf("first message %q", first)
	}
	if !pg.Visible(t, "#armed") || !pg.Visible(t, "#armed .armed") {
		t.Errorf("the armed mark is not shown")
	}
	if band := browsertest.Eval[string](t, pg, `getComputedStyle(document.querySelector("#armed > .band")).backgroundColor`); band != "rgb(209, 36, 47)" {
		t.Errorf("armed band colour %q", band)
	}
	// The rows before the first checkpoint are painted private by it.
	if band := browsertest.Eval[string](t, pg, `getComputedStyle(document.querySelector(".user > .band")).backgroundColor`); band != "rgb(47, 111, 214)" {
		t.Errorf("first message's band %q, want private", band)
	}
	// The first call (fs_read) is folded; clicking its line shows its result.
	result := "details.call pre:nth-of-type(2)"
	text := browsertest.Eval[string](t, pg, `document.querySelector("`+result+`").textContent`)
	if !strings.HasPrefix(text, "error: undefined: Foo\n</details><img src=x onerror=alert(2)>") {
		t.Fatalf("result text %q", text)
	}
	if pg.Visible(t, result) {
		t.Errorf("the result shows before the call is expanded")
	}
	pg.Click(t, "details.call > summary")
	if !pg.Visible(t, result) {
		t.Errorf("the result does not show once the call is expanded")
	}
	// The script runs (its hash is in the policy): expand all opens them all.
	pg.Click(t, `button[data-open="1"]`)
	if closed := browsertest.Eval[int](t, pg, `document.querySelectorAll("details.call:not([open])").length`); closed != 0 {
		t.Errorf("%d calls still closed after expand all", closed)
	}
	imgs := browsertest.Eval[int](t, pg, `document.images.length`)
	if imgs != 0 || len(pg.Dialogs()) > 0 || len(pg.Errors()) > 0 {
		t.Errorf("images %d, dialogs %q, errors %q", imgs, pg.Dialogs(), pg.Errors())
	}
	if r := pg.Requests(); !slices.Equal(r, []string{pg.URL}) || len(pg.Blocked()) > 0 {
		t.Errorf("requests %q, blocked %q, want only the page", r, pg.Blocked())
	}
}

// TestBrowserSeesRequests is the control of the test above: a page that
// loads an image and runs an inline script without a policy makes a
// request the listener records (and fails) and opens a dialog, so the
// checks there can fail.
func TestBrowserSeesRequests(t *testing.T) {
	browsertest.Chromium(t)
	p := filepath.Join(t.TempDir(), "leaky.html")
	page := `<!DOCTYPE html><html><head><title>leaky</title></head><body><img src="http://example.invalid/x.png"><script>alert("ran")</script></body></html>`
	if err := os.WriteFile(p, []byte(page), 0o600); err != nil {
		t.Fatal(err)
	}
	pg := browsertest.Open(t, p)
	browsertest.Eval[bool](t, pg, `new Promise(r => { const i = document.images[0]; if (i.complete) r(true); else { i.onerror = () => r(true); i.onload = () => r(true); } })`)
	if r := pg.Requests(); !slices.Contains(r, "http://example.invalid/x.png") || len(pg.Blocked()) > 0 {
		t.Errorf("requests %q, blocked %q: the image request was not seen", r, pg.Blocked())
	}
	if d := pg.Dialogs(); !slices.Equal(d, []string{"ran"}) {
		t.Errorf("dialogs %q", d)
	}
}

// TestPolicyBlocksInBrowser: markup that escaped escaping would still be
// inert under the page's policy: an image from the network is not
// requested and an inline script does not run. The control is
// TestBrowserSeesRequests, the same markup without the policy.
func TestPolicyBlocksInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	var b strings.Builder
	if err := Head(&b, "policy"); err != nil {
		t.Fatal(err)
	}
	b.WriteString(`<img src="http://example.invalid/x.png"><script>alert("ran")</script><p id="end">end</p>`)
	Foot(&b)
	p := filepath.Join(t.TempDir(), "policy.html")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	pg := browsertest.Open(t, p)
	browsertest.Eval[bool](t, pg, `new Promise(r => { const i = document.images[0]; if (i.complete) r(true); else { i.onerror = () => r(true); i.onload = () => r(true); } })`)
	if r := pg.Requests(); !slices.Equal(r, []string{pg.URL}) {
		t.Errorf("requests %q, want only the page", r)
	}
	if b := pg.Blocked(); !slices.Equal(b, []string{"http://example.invalid/x.png"}) {
		t.Errorf("blocked by the policy: %q", b)
	}
	if d := pg.Dialogs(); len(d) > 0 {
		t.Errorf("the inline script ran: dialogs %q", d)
	}
}

// TestSidecarInBrowser: past the budget a cut text's "show all" is a
// link; clicking it opens the sidecar file in a new tab, shown as text
// (the markup in it is text, not elements), while the page itself still
// requested nothing but its own file. The control is the page under its
// budget, where "show all" is a <details> in the page.
func TestSidecarInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	dir := t.TempDir()
	writePage(t, dir, Options{Cut: 16, Budget: 6000})
	pg := browsertest.Open(t, filepath.Join(dir, "page.html"))
	browsertest.Eval[bool](t, pg, `(function(){const a=[...[...document.querySelectorAll("details.call")].find(d=>d.querySelector("a.full")).querySelectorAll("a.full")].pop();a.id="follow";a.closest("details.call").open=true;return true})()`)
	href := browsertest.Eval[string](t, pg, `document.getElementById("follow").getAttribute("href")`)
	url, text := pg.FollowLink(t, "#follow")
	want, err := os.ReadFile(filepath.Join(dir, href))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(url, "/page.html.files/"+filepath.Base(href)) || text != string(want) {
		t.Errorf("the tab shows %s: %q, want %q", url, text, want)
	}
	if !strings.Contains(text, "<img src=x onerror=alert(2)>") {
		t.Errorf("the sidecar's markup is not shown as text: %q", text)
	}
	if r := pg.Requests(); !slices.Equal(r, []string{pg.URL}) || len(pg.Blocked()) > 0 || len(pg.Dialogs()) > 0 {
		t.Errorf("requests %q, blocked %q, dialogs %q", r, pg.Blocked(), pg.Dialogs())
	}
	// The page ends with a link to the next part, a page in the sidecar,
	// which links back to the page.
	next := browsertest.Eval[string](t, pg, `[...document.querySelectorAll("p.parts a")].pop().href`)
	part := filepath.Join(dir, "page.html.files", "part-0002.html")
	if want := "file://" + part; next != want {
		t.Errorf("next part %q, want %q", next, want)
	}
	pg = browsertest.Open(t, part)
	if title := browsertest.Eval[string](t, pg, `document.title`); !strings.HasSuffix(title, " · part 2") {
		t.Errorf("the part's title %q", title)
	}
	if back := browsertest.Eval[string](t, pg, `document.querySelector("p.parts a").href`); back != "file://"+filepath.Join(dir, "page.html") {
		t.Errorf("the part links back to %q", back)
	}
	if r := pg.Requests(); !slices.Equal(r, []string{pg.URL}) || len(pg.Errors()) > 0 {
		t.Errorf("the part: requests %q, errors %q", r, pg.Errors())
	}
	// Under the budget, the same text is one click away in the page.
	writePage(t, dir, Options{Cut: 16})
	pg = browsertest.Open(t, filepath.Join(dir, "page.html"))
	if n := browsertest.Eval[int](t, pg, `document.querySelectorAll("a.full").length`); n != 0 {
		t.Errorf("%d links under the budget", n)
	}
	full := browsertest.Eval[string](t, pg, `document.querySelector("details.call details.more pre").textContent`)
	if full != string(want) {
		t.Errorf("inline whole text %q, want %q", full, want)
	}
}

// TestLargePageInBrowser loads a page written beforehand (the path in
// $MECHA_VIEW_PAGE, such as sessions view's page of a 100 MB transcript):
// it checks that the page and each of its parts are within twice the
// default budget (a page ends after the row that passes the budget), then
// loads the last part and opens its last call: its arguments show and,
// when its result was cut to the sidecar, following the link shows the
// whole text. It logs how long loading and the clicks took; it measures,
// and asserts nothing about time. Without $MECHA_VIEW_PAGE it skips.
func TestLargePageInBrowser(t *testing.T) {
	path := os.Getenv("MECHA_VIEW_PAGE")
	if path == "" {
		t.Skip("set MECHA_VIEW_PAGE to a page to load (docs/PERFORMANCE.md)")
	}
	browsertest.Chromium(t)
	parts, _ := filepath.Glob(filepath.Join(SidecarDir(path), "part-*.html"))
	for _, p := range append([]string{path}, parts...) {
		if fi, err := os.Stat(p); err != nil || fi.Size() > 2*DefaultBudget {
			t.Errorf("%s: %v, over twice the budget", p, err)
		}
	}
	start := time.Now()
	pg := browsertest.Open(t, path)
	t.Logf("the page loaded in %v", time.Since(start).Round(time.Millisecond))
	last := path
	if len(parts) > 0 {
		last = parts[len(parts)-1]
		start = time.Now()
		pg = browsertest.Open(t, last)
		t.Logf("its last part (of %d) loaded in %v", len(parts)+1, time.Since(start).Round(time.Millisecond))
	}
	n := browsertest.Eval[int](t, pg, `document.querySelectorAll("details.call").length`)
	if n == 0 {
		t.Fatal("no calls in the page")
	}
	start = time.Now()
	browsertest.Eval[bool](t, pg, `(function(){const d=[...document.querySelectorAll("details.call")].pop();d.scrollIntoView();d.querySelector("summary").click();return d.open})()`)
	if !browsertest.Eval[bool](t, pg, `[...document.querySelectorAll("details.call")].pop().querySelector("pre").checkVisibility()`) {
		t.Errorf("the last call's arguments do not show once it is opened")
	}
	t.Logf("%d calls; the last call opened in %v", n, time.Since(start).Round(time.Millisecond))
	if browsertest.Eval[bool](t, pg, `(function(){const l=[...document.querySelectorAll("details.call")].pop().querySelectorAll("a.full");const a=[...l].pop();if(a)a.id="follow";return !!a})()`) {
		href := browsertest.Eval[string](t, pg, `document.getElementById("follow").getAttribute("href")`)
		want, err := os.ReadFile(filepath.Join(filepath.Dir(last), href))
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		if _, text := pg.FollowLink(t, "#follow"); text != string(want) {
			t.Errorf("the last call's whole result: %d bytes shown, want the %d of %s", len(text), len(want), href)
		}
		t.Logf("its whole result (%d bytes) opened in %v", len(want), time.Since(start).Round(time.Millisecond))
	}
	if r := pg.Requests(); !slices.Equal(r, []string{pg.URL}) {
		t.Errorf("requests %q", r)
	}
}
