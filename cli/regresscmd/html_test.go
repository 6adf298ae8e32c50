package regresscmd

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/testkit/browsertest"
)

// suites are two models over three pins, four runs each: the first clean
// throughout and priced, the second flaky on one pin and diverged on
// another, its name holding markup.
func suites() []regressSummary {
	usd := 0.0125
	a := regressSummary{Model: "alpha", Repeat: 4, Pins: 3, Divergences: map[string]int{}, Seconds: 2.5}
	b := regressSummary{Model: `beta<script>alert(1)</script>`, Repeat: 4, Pins: 3, Divergences: map[string]int{}, Seconds: 5}
	for _, id := range []string{"p1", "p2", "p3"} {
		a.add(pinOf(id, 4, true, true, true, true))
	}
	b.add(pinOf("p1", 4, true, true, true, true))
	b.add(pinOf("p2", 4, true, false, true, false))
	b.add(pinOf("p3", 4, false, false, false, false))
	a.Tokens, b.Tokens = tokens{Input: 3000, Output: 300}, tokens{Input: 1500, Output: 100}
	a.CostUSD, b.CostUSD = &usd, new(float64) // the runs here have no cost of their own
	a.rates()
	b.rates()
	return []regressSummary{a, b}
}

func TestHTMLPage(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := writeHTML(&buf, suites()); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{
		`<h1>mecha regress: 3 pins on 2 models, 4 runs each</h1>`,
		`<th>pass@4</th><th>pass^4</th>`,
		`<tr><td>alpha</td><td class="n">3/3</td><td class="n">1.00</td><td class="n">1.00</td><td class="n">1.00</td><td>none</td>`,
		`<td class="n">0.50</td><td class="n">0.67</td><td class="n">0.33</td><td>tool 6</td>`,
		`<h2>pass^4: pins clean in all 4 runs</h2>`,
		`<h2>cost at today&#39;s prices</h2>`,
		`<td class="st-flaky">flaky 2/4 (tool at call #0)</td>`,
		`beta&lt;script&gt;alert(1)&lt;/script&gt;`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Errorf("a model's name is live markup")
	}
}

// TestHTMLPageInBrowser loads the page in Chromium with the network
// blocked: only the page is requested, the charts are drawn with no
// script (bars to scale), the pins' statuses coloured.
func TestHTMLPageInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	p := filepath.Join(t.TempDir(), "regress.html")
	if err := writeHTMLFile(p, suites()); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("page %v %v", fi, err)
	}
	pg := browsertest.Open(t, p)
	charts := browsertest.Eval[[]string](t, pg, `Array.from(document.querySelectorAll("svg.chart")).map(s => s.getAttribute("aria-label"))`)
	want := []string{"clean rate (pass@1)", "pass^4: pins clean in all 4 runs", "divergences by kind", "tokens", "cost at today's prices", "wall time"}
	if !slices.Equal(charts, want) {
		t.Errorf("charts %q, want %q", charts, want)
	}
	// The clean rate bars: alpha 1.00 spans the chart, beta 0.50 half of it.
	widths := browsertest.Eval[[]float64](t, pg, `Array.from(document.querySelectorAll("svg.chart")[0].querySelectorAll("rect")).map(r => r.getBBox().width)`)
	if len(widths) != 2 || widths[0] != chartSpan || widths[1] != chartSpan/2 {
		t.Errorf("clean rate bars %v", widths)
	}
	// Divergences: alpha has none, beta a bar of its tool divergences.
	if n := browsertest.Eval[int](t, pg, `document.querySelectorAll("svg.chart")[2].querySelectorAll("rect.s-tool").length`); n != 1 {
		t.Errorf("%d tool bars", n)
	}
	if fill := browsertest.Eval[string](t, pg, `getComputedStyle(document.querySelector("rect.s-tool")).fill`); fill != "rgb(209, 36, 47)" {
		t.Errorf("tool bar fill %q", fill)
	}
	if bg := browsertest.Eval[string](t, pg, `getComputedStyle(document.querySelector("td.st-flaky")).backgroundColor`); bg != "rgb(255, 248, 197)" {
		t.Errorf("flaky cell %q", bg)
	}
	labels := browsertest.Eval[[]string](t, pg, `Array.from(document.querySelectorAll("svg.chart")[0].querySelectorAll("g.bar > text:first-child")).map(e => e.textContent)`)
	if !slices.Equal(labels, []string{"alpha", "beta<script>alert(1)</script>"}) {
		t.Errorf("labels %q", labels)
	}
	if len(pg.Dialogs()) > 0 || len(pg.Errors()) > 0 {
		t.Errorf("dialogs %q, errors %q", pg.Dialogs(), pg.Errors())
	}
	if r := pg.Requests(); !slices.Equal(r, []string{pg.URL}) || len(pg.Blocked()) > 0 {
		t.Errorf("requests %q, blocked %q, want only the page", r, pg.Blocked())
	}
}
