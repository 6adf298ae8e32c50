package html

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/testkit/browsertest"
)

// hostileAnswer is an answer whose Markdown tries to run script: a
// javascript: link, the same address in an autolink's clothing, raw HTML
// with a handler and a script; beside them the Markdown a page must show.
const hostileAnswer = "## Done\n\nWrote **hello.txt** and *one* more.\n\n1. first\n2. second\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n" +
	"[click me](javascript:document.title='pwned') and [ok](https://example.com/)\n\n" +
	"<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>\n\n```go\nx := 1\n```\n"

// markdownPage writes a page of a session whose one answer is answer.
func markdownPage(t *testing.T, answer string) string {
	t.Helper()
	dir := t.TempDir()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	lines := []string{
		`{"record":"meta","format":1,"id":"20261201T090000-aaaaaaaa","created_at":"2026-12-01T09:00:00Z","provider":"mock","model":"mock","workspace":"/w","title":"md"}`,
		`{"record":"message","role":"user","content":[{"type":"text","text":"go"}],"at":"2026-12-01T09:00:01Z"}`,
		`{"record":"message","role":"assistant","content":[{"type":"text","text":` + q(answer) + `}],"stop_reason":"end_turn","at":"2026-12-01T09:00:02Z"}`,
	}
	src := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(src, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "page.html")
	if err := os.WriteFile(p, []byte(render(t, src, Options{})), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMarkdownInBrowser: an answer's Markdown is rendered (a heading,
// bold, italics, a numbered list, a table, a link, code), and the attack
// in it is stopped: its javascript: link cannot be clicked (the anchor has
// no such address; clicking it changes nothing) and its raw HTML is not
// in the page. The control renders the same answer with goldmark's unsafe
// mode, the guard off: there the javascript: link is a live anchor and
// the raw tags are elements.
func TestMarkdownInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	pg := browsertest.Open(t, markdownPage(t, hostileAnswer))
	for sel, want := range map[string]string{
		".assistant .md h2":               "Done",
		".assistant .md strong":           "hello.txt",
		".assistant .md em":               "one",
		".assistant .md ol li":            "first",
		".assistant .md table td":         "1",
		".assistant .md pre code":         "x := 1\n",
		`.assistant .md a[href^="https"]`: "ok",
	} {
		if got := browsertest.Eval[string](t, pg, `(document.querySelector(`+strconv.Quote(sel)+`)||{}).textContent||""`); got != want {
			t.Errorf("%s shows %q, want %q", sel, got, want)
		}
	}
	js := `[...document.querySelectorAll(".assistant a")].filter(a => (a.getAttribute("href")||"").trim().toLowerCase().startsWith("javascript:")).length`
	if n := browsertest.Eval[int](t, pg, js); n != 0 {
		t.Errorf("%d javascript: links can be clicked", n)
	}
	if n := browsertest.Eval[int](t, pg, `document.querySelectorAll(".assistant .md img, .assistant .md script").length`); n != 0 {
		t.Errorf("%d raw HTML elements in the answer", n)
	}
	browsertest.Eval[bool](t, pg, `(function(){const a=[...document.querySelectorAll(".assistant .md a")].find(a=>a.textContent==="click me"); a.id="hostile"; return true})()`)
	pg.Click(t, "#hostile")
	if title := browsertest.Eval[string](t, pg, `document.title`); title == "pwned" || len(pg.Dialogs()) > 0 || len(pg.Blocked()) > 0 {
		t.Errorf("clicking the hostile link: title %q, dialogs %q, blocked %q", title, pg.Dialogs(), pg.Blocked())
	}

	// The control: the guard off.
	markdownRenderer = unsafeMarkdown
	t.Cleanup(func() { markdownRenderer = safeMarkdown })
	pg = browsertest.Open(t, markdownPage(t, hostileAnswer))
	if n := browsertest.Eval[int](t, pg, js); n != 1 {
		t.Errorf("control: %d javascript: links, want the 1 the guard removes", n)
	}
	if n := browsertest.Eval[int](t, pg, `document.querySelectorAll(".assistant .md img, .assistant .md script").length`); n != 2 {
		t.Errorf("control: %d raw HTML elements, want 2", n)
	}
}
