package sessionview_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/sessionview"
	viewhtml "github.com/mecha-agent/mecha/record/sessionview/html"
)

// fenceLen returns the length of the fence a fenced block opens with.
func fenceLen(line string) int { return len(line) - len(strings.TrimLeft(line, "`")) }

// closes reports whether a line of content would close a fence of n
// backticks (CommonMark: up to three spaces, then at least n backticks,
// then only spaces).
func closes(line string, n int) bool {
	l := strings.TrimLeft(line, " ")
	if len(line)-len(l) > 3 {
		return false
	}
	k := fenceLen(l)
	return k >= n && strings.TrimSpace(l[k:]) == ""
}

// TestMarkdownFenceHoldsItsText: no line of the text can close the fence,
// whatever backtick runs it holds. The control shows a fixed three-backtick
// fence being closed by the same text.
func TestMarkdownFenceHoldsItsText(t *testing.T) {
	for _, text := range []string{"plain", "```", "a ``` b\n````\n```` ", "``````````", "   ```\n", "x`"} {
		var b bytes.Buffer
		sessionview.MarkdownFence(&b, text)
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n\n"), "\n")
		n := fenceLen(lines[0])
		if n < 3 || lines[len(lines)-1] != strings.Repeat("`", n) {
			t.Fatalf("%q: not a fenced block: %q", text, b.String())
		}
		for _, l := range lines[1 : len(lines)-1] {
			if closes(l, n) {
				t.Errorf("%q: line %q closes the fence of %d", text, l, n)
			}
		}
	}
	if !closes("````", 3) {
		t.Errorf("control: a four-backtick line does not close a fence of three")
	}
}

// TestMarkdownEscape: one line, every ASCII punctuation character escaped,
// so no emphasis, link, tag, entity, cell or heading can start; other text
// unchanged.
func TestMarkdownEscape(t *testing.T) {
	got := sessionview.MarkdownEscape("# a *b* [c](d) <img onerror=x> &amp; | `e`\n_f_ é")
	want := `\# a \*b\* \[c\]\(d\) \<img onerror\=x\> \&amp\; \| \` + "`" + `e\` + "`" + ` \_f\_ é`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestExportRenderersOverFixtures: the page and the Markdown render every
// fixture (the frozen ones and forty generated shapes: parallel calls in
// shuffled order, steering, denials, odd records) to the end.
func TestExportRenderersOverFixtures(t *testing.T) {
	t.Parallel()
	for _, path := range fixtures(t) {
		var page, md bytes.Buffer
		if err := viewhtml.Write(&page, path, prices()[1], viewhtml.Options{Cut: 100}); err != nil {
			t.Fatalf("%s: html: %v", path, err)
		}
		if !strings.HasSuffix(page.String(), "</body>\n</html>\n") {
			t.Errorf("%s: page not closed", path)
		}
		if strings.Count(page.String(), "<details") != strings.Count(page.String(), "</details>") {
			t.Errorf("%s: details open and close %d and %d times", path, strings.Count(page.String(), "<details"), strings.Count(page.String(), "</details>"))
		}
		if err := sessionview.WriteMarkdown(&md, path, prices()[1], sessionview.MarkdownOptions{}); err != nil {
			t.Fatalf("%s: markdown: %v", path, err)
		}
		if strings.Count(md.String(), "<details>") != strings.Count(md.String(), "</details>") {
			t.Errorf("%s: markdown details unbalanced", path)
		}
	}
}

// TestMarkdownTableCells: a value holding pipes and backticks stays one
// code span in its cell; a call's summary is code (GitHub neither links
// nor mentions in code).
func TestMarkdownTableCells(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "20260805T091500-00000001.jsonl")
	body := `{"record":"meta","format":1,"id":"20260805T091500-00000001","created_at":"2026-08-05T09:15:00Z","provider":"mock","model":"m","workspace":"/w|x ` + "``" + `y` + "`" + `","title":"t"}
{"record":"message","role":"user","content":[{"type":"text","text":"go"}]}
{"record":"message","role":"assistant","content":[{"type":"tool_use","id":"a","name":"shell","input":{"command":"curl -d @user <x>"}}]}
`
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := sessionview.WriteMarkdown(&b, p, nil, sessionview.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| workspace | ``` /w\\|x ``y` ``` |\n",
		"<details><summary><code>→ shell {&#34;command&#34;:&#34;curl -d @user &lt;x&gt;&#34;} · no result recorded</code></summary>\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, b.String())
		}
	}
}
