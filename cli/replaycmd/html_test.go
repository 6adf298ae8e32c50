package replaycmd

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/redrive/replay"
	"github.com/mecha-agent/mecha/testkit/browsertest"
)

// report is a replay of two turns: an argument difference at call 0, the
// same call at 1, then another tool at call 2 that stopped the replay
// before call 3. Arguments hold markup.
func report() *replay.Report {
	in := func(s string) json.RawMessage { return json.RawMessage(s) }
	return &replay.Report{
		Session: "20260805T091500-3f2a1b7c", Provider: "local", Model: "local", Mode: replay.ModeStop, Status: replay.StatusDiverged,
		CallsExpected: 4, CallsReplayed: 2, Turns: 3,
		Recorded: []replay.Step{
			{Turn: 1, Index: 0, Name: "fs_read", Input: in(`{"path":"a.txt","limit":10}`)},
			{Turn: 1, Index: 1, Name: "fs_write", Input: in(`{"path":"b.txt"}`)},
			{Turn: 2, Index: 2, Name: "shell", Input: in(`{"command":"make <b>x</b>"}`)},
			{Turn: 2, Index: 3, Name: "fs_read", Input: in(`{"path":"c.txt"}`)},
		},
		Replayed: []replay.Step{
			{Turn: 1, Index: 0, Name: "fs_read", Input: in(`{"path":"./a.txt","limit":10}`)},
			{Turn: 1, Index: 1, Name: "fs_write", Input: in(`{"path":"b.txt"}`)},
			{Turn: 2, Index: 2, Name: "web_fetch", Input: in(`{"url":"<script>alert(1)</script>"}`)},
		},
		Divergences: []replay.Divergence{
			{Kind: replay.KindArguments, Index: 0, Turn: 1, Expected: &replay.CallRef{Name: "fs_read", Input: in(`{"path":"a.txt","limit":10}`)}, Actual: &replay.CallRef{Name: "fs_read", Input: in(`{"path":"./a.txt","limit":10}`)}},
			{Kind: replay.KindTool, Index: 2, Turn: 2, Structural: true, Expected: &replay.CallRef{Name: "shell"}, Actual: &replay.CallRef{Name: "web_fetch"},
				Attach: 1, After: []string{"tool_spec:shell", "system_prompt"}},
		},
		RequestChanges: []replay.RequestChange{
			{Attach: 1, Field: replay.FieldSystemPrompt, Recorded: "0123", Now: "4567", Diff: "--- recorded\n+++ now\n@@ -1 +1 @@\n-Be brief.\n+Be <b>terse</b>.\n"},
			{Attach: 1, Field: replay.FieldToolSpec, Tool: "shell", Changed: []string{"description"}, Diff: "--- recorded\n+++ now\n@@ -1 +1 @@\n-Run.\n+Run a command.\n"},
			{Attach: 1, Field: "temperature", Recorded: 0.2, Now: nil},
		},
	}
}

func TestHTMLReport(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := WriteHTML(&b, []*replay.Report{report()}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<tr class="div div-arguments"><td>0</td>`,
		`<span class="del">-  &#34;path&#34;: &#34;a.txt&#34;,</span>`,
		`<span class="add">&#43;  &#34;path&#34;: &#34;./a.txt&#34;,</span>`,
		`<span class="">   &#34;limit&#34;: 10</span>`,
		`<tr><td>1</td><td class="call"><b>fs_write</b>`,
		`<h2>turn 2</h2>`,
		`<tr class="div div-tool"><td>2</td><td class="call"><b>shell</b> {&#34;command&#34;:&#34;make &lt;b&gt;x&lt;/b&gt;&#34;}</td><td class="call"><b>web_fetch</b> {&#34;url&#34;:&#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;}</td>`,
		`<tr><td>3</td><td class="call"><b>fs_read</b> {&#34;path&#34;:&#34;c.txt&#34;}</td><td class="call">—</td>`,
		"not reached: the replay stopped before it",
		`<h2>changed since the recording</h2>`,
		`<tr id="r1-change-1"><td>1</td><td>system prompt</td><td colspan="2"><pre class="diff"><span class="dim">--- recorded</span>`,
		`<span class="add">&#43;Be &lt;b&gt;terse&lt;/b&gt;.</span>`,
		`<tr id="r1-change-2"><td>1</td><td>shell&#39;s spec: description changed</td>`,
		`<tr id="r1-change-3"><td>1</td><td>temperature</td><td>0.2</td><td>null</td></tr>`,
		`<div class="after">after the changes to: <a href="#r1-change-2">shell&#39;s spec</a>, <a href="#r1-change-1">system prompt</a></div>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(page, "<script>alert") {
		t.Errorf("markup from an argument is live")
	}
}

// TestHTMLReportInBrowser loads the report in Chromium with the network
// blocked: only the file is requested; the two sequences are side by side,
// the divergent rows highlighted with their kind, the diff shown.
func TestHTMLReportInBrowser(t *testing.T) {
	browsertest.Chromium(t)
	p := filepath.Join(t.TempDir(), "report.html")
	var b bytes.Buffer
	if err := WriteHTML(&b, []*replay.Report{report()}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	pg := browsertest.Open(t, p)
	if title := browsertest.Eval[string](t, pg, `document.title`); title != "mecha replay of 20260805T091500-3f2a1b7c" {
		t.Errorf("title %q", title)
	}
	rows := browsertest.Eval[[]string](t, pg, `Array.from(document.querySelectorAll("table.side tr:has(td)")).map(r => Array.from(r.cells).slice(0, 3).map(c => c.innerText).join(" | "))`)
	want := []string{
		`0 | fs_read {"path":"a.txt","limit":10} | fs_read {"path":"./a.txt","limit":10}`,
		`1 | fs_write {"path":"b.txt"} | fs_write {"path":"b.txt"}`,
		`2 | shell {"command":"make <b>x</b>"} | web_fetch {"url":"<script>alert(1)</script>"}`,
		`3 | fs_read {"path":"c.txt"} | —`,
	}
	if !slices.Equal(rows, want) {
		t.Errorf("rows\n%q\nwant\n%q", rows, want)
	}
	if bg := browsertest.Eval[string](t, pg, `getComputedStyle(document.querySelector("tr.div-tool > td")).backgroundColor`); bg != "rgb(255, 235, 233)" {
		t.Errorf("divergent row background %q", bg)
	}
	if kind := browsertest.Eval[string](t, pg, `document.querySelector("tr.div-tool .kind").innerText`); kind != "tool" {
		t.Errorf("kind %q", kind)
	}
	if !pg.Visible(t, "pre.diff .del") || !pg.Visible(t, "pre.diff .add") {
		t.Errorf("the argument diff is not shown")
	}
	// The changes come before the calls, and a divergence links to each
	// change before it.
	if first := browsertest.Eval[string](t, pg, `document.querySelector("section.report h2").innerText`); first != "changed since the recording" {
		t.Errorf("the report opens with %q", first)
	}
	links := browsertest.Eval[[]string](t, pg, `Array.from(document.querySelectorAll(".after a")).map(a => a.innerText + " → " + document.querySelector(a.getAttribute("href")).cells[1].innerText)`)
	if want := []string{"shell's spec → shell's spec: description changed", "system prompt → system prompt"}; !slices.Equal(links, want) {
		t.Errorf("links %q, want %q", links, want)
	}
	if len(pg.Dialogs()) > 0 || len(pg.Errors()) > 0 {
		t.Errorf("dialogs %q, errors %q", pg.Dialogs(), pg.Errors())
	}
	if r := pg.Requests(); !slices.Equal(r, []string{pg.URL}) || len(pg.Blocked()) > 0 {
		t.Errorf("requests %q, blocked %q, want only the page", r, pg.Blocked())
	}
}

// TestHTMLReportRepeats: --repeat N puts each replay's report on the page,
// numbered.
func TestHTMLReportRepeats(t *testing.T) {
	t.Parallel()
	clean := report()
	clean.Status, clean.Divergences, clean.Replayed = replay.StatusClean, nil, clean.Recorded
	var b bytes.Buffer
	if err := WriteHTML(&b, []*replay.Report{report(), clean}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Count(page, `<section class="report">`) != 2 || !strings.Contains(page, "· repeat 2</h1>") ||
		!strings.Contains(page, `<td class="status-clean">clean</td>`) || strings.Count(page, `class="div div-`) != 2 {
		t.Errorf("two reports not both shown:\n%s", page)
	}
}

// TestArgDiff: two inputs differ as indented JSON in a unified diff whose
// lines are classed for colour; an input is not a file, so its last line
// is not marked as lacking a newline.
func TestArgDiff(t *testing.T) {
	t.Parallel()
	got := argDiff(json.RawMessage(`{"path":"a.txt","limit":10}`), json.RawMessage(`{"path":"./a.txt","limit":10}`))
	want := []diffLine{
		{"dim", "--- recorded"}, {"dim", "+++ replayed"}, {"dim", "@@ -1,4 +1,4 @@"},
		{"", " {"}, {"del", `-  "path": "a.txt",`}, {"add", `+  "path": "./a.txt",`}, {"", `   "limit": 10`}, {"", " }"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("argDiff =\n%q\nwant\n%q", got, want)
	}
}
