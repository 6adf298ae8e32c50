package html

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/sessionview"
	xhtml "golang.org/x/net/html"
)

const fixture = "testdata/20260805T091500-3f2a1b7c.jsonl"

func render(t *testing.T, path string, opts Options) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, path, nil, opts); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// active returns what in a page could run or fetch: every script other
// than the page's own, every event-handler attribute, every element that
// loads something (img, iframe, object, embed, link, base, form, meta
// refresh), and any javascript: URL.
func active(t *testing.T, page string) []string {
	t.Helper()
	var found []string
	z := xhtml.NewTokenizer(strings.NewReader(page))
	inScript := false
	for {
		tt := z.Next()
		if tt == xhtml.ErrorToken {
			return found
		}
		tok := z.Token()
		switch tt {
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			switch tok.Data {
			case "script":
				inScript = true
			case "img", "iframe", "object", "embed", "link", "base", "form", "video", "audio", "svg", "math":
				found = append(found, "<"+tok.Data+">")
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(a.Key, "on") || strings.Contains(strings.ToLower(a.Val), "javascript:") ||
					a.Key == "http-equiv" && strings.EqualFold(a.Val, "refresh") {
					found = append(found, tok.Data+" "+a.Key+"="+a.Val)
				}
			}
		case xhtml.TextToken:
			if inScript && tok.Data != script {
				found = append(found, "script: "+tok.Data)
			}
		case xhtml.EndTagToken:
			if tok.Data == "script" {
				inScript = false
			}
		}
	}
}

// TestMarkupRendersInert: the fixture holds <script>, </details>, an img
// with onerror and a bold tag in a title, a prompt and a result. The page
// has no script but its own and nothing that loads or handles events; the
// text shows as text. The control pastes the same text into HTML unescaped
// and the check finds it: it can fail.
func TestMarkupRendersInert(t *testing.T) {
	page := render(t, fixture, Options{})
	if a := active(t, page); len(a) > 0 {
		t.Errorf("active content in the page: %q", a)
	}
	for _, want := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;/details&gt;&lt;img src=x onerror=alert(2)&gt;", "why does the build &lt;b&gt;fail&lt;/b&gt;?"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the escaped text %s", want)
		}
	}
	raw, _ := os.ReadFile(fixture)
	naive := "<html><body><pre>" + string(raw) + "</pre></body></html>"
	if a := active(t, naive); len(a) < 2 {
		t.Errorf("the check finds %q in unescaped markup, want the script and the img", a)
	}
}

// TestPolicy: the page's one script is allowed by its hash, and the policy
// forbids every fetch.
func TestPolicy(t *testing.T) {
	page := render(t, fixture, Options{})
	sum := sha256.Sum256([]byte(script))
	if !strings.Contains(CSP, "'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
		t.Errorf("CSP %q does not allow the script", CSP)
	}
	if !strings.Contains(page, "<script>"+script+"</script>") {
		t.Errorf("the script is not in the page as hashed")
	}
	for _, want := range []string{"default-src 'none'", "connect-src 'none'", "img-src 'none'", "base-uri 'none'", "form-action 'none'"} {
		if !strings.Contains(CSP, want) {
			t.Errorf("CSP lacks %s", want)
		}
	}
	if !strings.Contains(page, `<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;;`) {
		t.Errorf("no policy meta at the head of the page")
	}
}

// TestLongTextCut: a result longer than the cut shows its start, and the
// whole text is in a closed details below it; one within the cut is shown
// once, whole.
func TestLongTextCut(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "20260805T091500-00000001.jsonl")
	long := strings.Repeat("é", 40) + "THE-END"
	body := `{"record":"meta","format":1,"id":"20260805T091500-00000001","created_at":"2026-08-05T09:15:00Z","provider":"mock","model":"m","workspace":"/w","title":"t"}
{"record":"message","role":"user","content":[{"type":"text","text":"go"}]}
{"record":"message","role":"assistant","content":[{"type":"tool_use","id":"a","name":"fs_read","input":{"path":"x"}},{"type":"tool_use","id":"b","name":"fs_read","input":{"path":"y"}}]}
{"record":"message","role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"` + long + `"},{"type":"tool_result","tool_use_id":"b","content":"short"}]}
`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	page := render(t, p, Options{Cut: 31})
	shown := strings.Repeat("é", 15) // 30 bytes: the cut backs off to a rune start
	if !strings.Contains(page, "<pre>"+shown+"</pre>") {
		t.Errorf("the cut start is not shown")
	}
	if !strings.Contains(page, `<details class="more"><summary>cut: 30 of 87 bytes shown · show all</summary><pre>`+long+`</pre></details>`) {
		t.Errorf("the whole text is not one click away:\n%s", page)
	}
	if strings.Count(page, "short") != 1 || strings.Count(page, "show all") != 1 {
		t.Errorf("the short result is cut")
	}
	// The band of rows with no checkpoint after them stays unknown.
	if strings.Contains(page, ".s0>") {
		t.Errorf("uncovered rows painted")
	}
}

// TestTaintBand: each checkpoint paints the rows it covers with its merged
// taint, and the armed one is marked once.
func TestTaintBand(t *testing.T) {
	page := render(t, fixture, Options{})
	for _, want := range []string{
		"<style>\n.s0>.band{background:var(--private)}\n.s1>.band,.s2>.band{background:var(--both)}\n</style>\n</body>",
		`<div class="row t-both checkpoint armed" id="armed">`,
		`<a href="#armed">where it became armed</a>`,
		`<span class="badge b-denied">denied</span>`,
		`<span class="badge b-interlocked">refused by the trifecta interlock</span>`,
		`<tr class="changed"><th>max_turns</th><td>40 <span class="was">(was 20)</span>`,
		"compacted: the first 6 messages replaced",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Count(page, `id="armed"`) != 1 {
		t.Errorf("armed marked %d times", strings.Count(page, `id="armed"`))
	}
}

// TestEveryFixtureRenders: each frozen transcript fixture (every record
// kind, served MCP calls, roles mecha does not write, damaged lines)
// renders to a page with nothing active in it, and as Markdown.
func TestEveryFixtureRenders(t *testing.T) {
	paths, _ := filepath.Glob("../../transcript/testdata/v1/*.jsonl")
	if len(paths) == 0 {
		t.Fatal("no v1 fixtures")
	}
	for _, p := range paths {
		page := render(t, p, Options{Cut: 64})
		if a := active(t, page); len(a) > 0 {
			t.Errorf("%s: active content %q", filepath.Base(p), a)
		}
		if !strings.HasSuffix(page, "</body>\n</html>\n") || !strings.Contains(page, `<h2 id="totals">`) {
			t.Errorf("%s: page not closed", filepath.Base(p))
		}
		var md bytes.Buffer
		if err := sessionview.WriteMarkdown(&md, p, nil, sessionview.MarkdownOptions{}); err != nil || !strings.Contains(md.String(), "## Usage") {
			t.Errorf("%s: markdown: %v", filepath.Base(p), err)
		}
	}
}
