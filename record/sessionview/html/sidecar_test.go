package html

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// writePage writes the fixture's page at dir/page.html with its sidecar,
// as sessions view does, and returns the page.
func writePage(t *testing.T, dir string, opts Options) (string, *Sidecar) {
	t.Helper()
	p := filepath.Join(dir, "page.html")
	side, err := NewSidecar(p)
	if err != nil {
		t.Fatal(err)
	}
	defer side.Cleanup()
	opts.Files = side
	var b bytes.Buffer
	if err := Write(&b, fixture, nil, opts); err != nil {
		t.Fatal(err)
	}
	if err := side.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return b.String(), side
}

// TestBudgetSplit feeds texts to the renderer one by one: under the
// budget a long text is cut with its whole text in the page; the first
// that would pass the budget, and every long text after it, shows a
// Preview and has its whole text, byte for byte, in the sidecar; short
// texts stay whole. Without a sidecar the whole text is left out.
func TestBudgetSplit(t *testing.T) {
	dir := t.TempDir()
	side, err := NewSidecar(filepath.Join(dir, "p.html"))
	if err != nil {
		t.Fatal(err)
	}
	defer side.Cleanup()
	r := &renderer{w: bufio.NewWriter(io.Discard), cut: 100, budget: 900, files: side, link: "p.html.files/"}
	big := "abcd" + strings.Repeat("é</script><b>x</b>", 40) // 764 bytes; an é at bytes 99-100
	l := r.long(big)
	if !l.Cut || l.Full != big || l.Href != "" || len(l.Shown) != 99 {
		t.Errorf("under the budget: cut %v, full %d bytes, href %q, shown %d", l.Cut, len(l.Full), l.Href, len(l.Shown))
	}
	if l := r.long("short"); l.Cut || l.Shown != "short" {
		t.Errorf("a short text was cut: %+v", l)
	}
	l = r.long(big) // 868 used: this one would pass 900
	if l.Full != "" || l.Href != "p.html.files/0001.txt" || len(l.Shown) != 99 {
		t.Errorf("past the budget: full %d bytes, href %q, shown %d", len(l.Full), l.Href, len(l.Shown))
	}
	if l := r.long("short again"); l.Cut {
		t.Errorf("a short text past the budget was cut")
	}
	// With a sidecar, past the budget a text under the cut stays whole
	// (the page's size is bounded by its parts).
	if l := r.long(strings.Repeat("m", 99)); l.Cut {
		t.Errorf("a text under the cut was cut")
	}
	if err := side.Commit(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"0001.txt": big} {
		p := filepath.Join(dir, "p.html.files", name)
		got, err := os.ReadFile(p)
		if err != nil || string(got) != want {
			t.Errorf("%s: %d bytes, %v; want the text", name, len(got), err)
		}
		if fi, _ := os.Stat(p); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", name, fi.Mode())
		}
	}
	if fi, _ := os.Stat(filepath.Join(dir, "p.html.files")); fi.Mode().Perm() != 0o700 {
		t.Errorf("sidecar mode %v", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(dir, "p.html.files", "0002.txt")); err == nil {
		t.Errorf("a second file")
	}
	// Without a sidecar, past the budget the whole text is left out, and
	// a text over the Preview shows just that.
	r = &renderer{w: bufio.NewWriter(io.Discard), cut: DefaultCut, budget: 10}
	if l := r.long(big); l.Cut || l.Shown != big {
		t.Errorf("no sidecar, the first text was cut")
	}
	mid := strings.Repeat("m", 600)
	if l := r.long(mid); !l.Omitted || l.Shown != mid[:Preview] {
		t.Errorf("no sidecar, past the budget: shown %d, %+v", len(l.Shown), l.Omitted)
	}
}

// TestSmallPageUnchanged: a page under its budget is the page written
// without a sidecar, byte for byte, and leaves no directory.
func TestSmallPageUnchanged(t *testing.T) {
	dir := t.TempDir()
	page, side := writePage(t, dir, Options{Cut: 64})
	if page != render(t, fixture, Options{Cut: 64}) {
		t.Errorf("the page changed with a sidecar")
	}
	if side.Files() != 0 || strings.Contains(page, ".files/") {
		t.Errorf("%d files", side.Files())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left beside the page: %v", ents)
	}
}

var hrefRE = regexp.MustCompile(`<a class="full" href="((?:page\.html\.files/)?[0-9]{4}\.txt)" target="_blank" rel="noopener">cut: ([0-9]+) of ([0-9,]+) bytes shown`)

var nextRE = regexp.MustCompile(`<a href="((?:page\.html\.files/)?part-[0-9]{4}\.html)">next part →</a>`)

// TestSidecarPage: past the budget the session goes on in parts, each a
// page in the sidecar linked from the one before; every cut text links
// its file, whose content is the transcript's text (markup in it
// included: it is a .txt file, which a browser shows as text); every
// part is inert and under the budget but for its last row; the totals
// are in the last part.
func TestSidecarPage(t *testing.T) {
	dir := t.TempDir()
	page, side := writePage(t, dir, Options{Cut: 16, Budget: 6000})
	pages, links, script := 0, 0, false
	for at := filepath.Join(dir, "page.html"); at != ""; pages++ {
		b, err := os.ReadFile(at)
		if err != nil {
			t.Fatal(err)
		}
		page = string(b)
		if a := active(t, page); len(a) > 0 || strings.Contains(page, "<script>alert") {
			t.Errorf("%s: active content: %q", at, a)
		}
		for _, l := range hrefRE.FindAllStringSubmatch(page, -1) {
			links++
			b, err := os.ReadFile(filepath.Join(filepath.Dir(at), l[1]))
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.ReplaceAll(l[3], ",", ""); got != fmt.Sprint(len(b)) {
				t.Errorf("%s: %d bytes, the page says %s", l[1], len(b), l[3])
			}
			script = script || bytes.Contains(b, []byte("<script>alert(1)</script>"))
		}
		if len(b) > 6000+6000 {
			t.Errorf("%s: %d bytes", at, len(b))
		}
		next := nextRE.FindStringSubmatch(page)
		if next == nil {
			pages++
			break
		}
		if strings.Contains(page, `id="totals"`) {
			t.Errorf("%s: totals before the last part", at)
		}
		at = filepath.Join(filepath.Dir(at), next[1])
	}
	if !strings.Contains(page, `<h2 id="totals">totals</h2>`) {
		t.Errorf("the last part has no totals")
	}
	if pages < 2 || pages != side.Parts() || links == 0 || links != side.Files() {
		t.Errorf("%d pages followed of %d, %d links of %d files", pages, side.Parts(), links, side.Files())
	}
	if !script {
		t.Errorf("no sidecar file holds the fixture's <script> text as it is")
	}
}

// TestSidecarReplaced: a second view replaces the sidecar with its own; a
// view that needs none removes it; a name taken by a file or by a
// directory of other files is refused before anything is written, and the
// control: without the sidecar name taken, the same view succeeds.
func TestSidecarReplaced(t *testing.T) {
	dir := t.TempDir()
	writePage(t, dir, Options{Cut: 16, Budget: 6000})
	stale := filepath.Join(dir, "page.html.files", "9999.txt")
	os.WriteFile(stale, []byte("stale"), 0o600)
	writePage(t, dir, Options{Cut: 16, Budget: 6000})
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("a stale file survived")
	}
	writePage(t, dir, Options{})
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left beside the page: %v", ents)
	}
	side := filepath.Join(dir, "page.html.files")
	os.WriteFile(side, []byte("mine"), 0o600)
	if _, err := NewSidecar(filepath.Join(dir, "page.html")); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file in the way: %v", err)
	}
	os.Remove(side)
	os.Mkdir(side, 0o700)
	os.WriteFile(filepath.Join(side, "notes.md"), []byte("mine"), 0o600)
	if _, err := NewSidecar(filepath.Join(dir, "page.html")); err == nil || !strings.Contains(err.Error(), "notes.md") {
		t.Errorf("a directory of other files: %v", err)
	}
	os.RemoveAll(side)
	writePage(t, dir, Options{Cut: 16, Budget: 6000})
}
