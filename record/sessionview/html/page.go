// Package html renders a session, as sessionview sees it, as one
// self-contained HTML page: styles and a small script inline, a
// Content-Security-Policy that forbids every fetch, everything from the
// transcript escaped by html/template. It writes as sessionview reads the
// file, holding nothing but the exchange a reply waits in, so a transcript
// of hundreds of megabytes becomes a page in one pass.
//
// # Long text
//
// A tool result, a message, a compaction summary or a system prompt longer
// than Options.Cut shows its first Cut bytes; the whole text sits in a
// closed <details> below it, one click away. A browser neither lays out
// nor paints what a closed <details> holds, so the page opens as fast as
// its visible part, and it stays one file that works without its script.
//
// That holds while the page is under its budget (Options.Budget bytes).
// A browser still parses every byte, folded or not, so with a Sidecar a
// cut text whose whole text would take the page past its budget has it in
// a plain-text file of the sidecar, linked from the cut, and a page that
// has reached its budget ends after the next taint checkpoint (so each of
// its rows has its band) with a link to the next part, a page of the
// sidecar. Each page is then about Budget bytes whatever the transcript's
// size. A link is a navigation, not a fetch, so the policy still forbids
// every request of the page itself. Without a sidecar (a page written to a
// stream) there is one page, whose long texts past the budget show a
// Preview, the rest left out.
//
// # Taint
//
// Each row of the page carries the number of the taint checkpoints read
// before it (its segment). A checkpoint covers the messages written since
// the one before, so its segment's band is painted with the checkpoint's
// merged taint by one style element at the end of the page (a few bytes
// per checkpoint are all the renderer keeps); rows with no checkpoint after
// them keep the "unknown" band. Rows are laid out only when near the
// viewport (content-visibility), so a page of tens of thousands of rows
// opens quickly. The checkpoint where
// the conversation became armed (private and untrusted) is marked in the
// band and linked from the top of the page.
//
// The package is also the page's frame for other reports (Head, Foot),
// such as replay's.
package html

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"io"
	"sync"
)

// script is the page's only script: "expand all"/"collapse all" for tool
// calls. The page works without it (every call is a <details>).
const script = `document.addEventListener("click",function(e){var b=e.target.closest("button[data-open]");if(!b)return;var o=b.dataset.open==="1";document.querySelectorAll("details.call").forEach(function(d){d.open=o})});`

// scriptHash is the CSP source that allows the script above and no other.
var scriptHash = func() string {
	sum := sha256.Sum256([]byte(script))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}()

// CSP is the page's Content-Security-Policy: nothing may be fetched,
// framed, submitted or based elsewhere; styles inline; the one script by
// its hash.
var CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src " + scriptHash +
	"; img-src 'none'; font-src 'none'; connect-src 'none'; media-src 'none'; object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"

const style = `
:root{--clean:#3a9d5d;--private:#2f6fd6;--untrusted:#e08a00;--both:#d1242f;--unknown:repeating-linear-gradient(45deg,#bbb 0 4px,#eee 4px 8px);--fg:#1f2328;--dim:#656d76;--line:#d0d7de;--bg:#fff;--code:#f6f8fa}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--dim:#8d96a0;--line:#30363d;--bg:#0d1117;--code:#161b22}}
body{font:14px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg);margin:0 auto;max-width:1100px;padding:1em 1.5em}
h1{font-size:1.3em;margin:.2em 0 .6em}
table.meta{border-collapse:collapse;margin-bottom:1em}
table.meta th{text-align:left;color:var(--dim);font-weight:normal;padding:1px 1em 1px 0;vertical-align:top}
table.meta td{padding:1px 0;word-break:break-all}
.md table{border-collapse:collapse}.md th,.md td{border:1px solid var(--code);padding:.2em .5em}.md p{margin:.3em 0}.md code{background:var(--code);padding:0 .2em;border-radius:3px}
pre{background:var(--code);padding:.5em .7em;margin:.3em 0;white-space:pre-wrap;word-break:break-word;border-radius:4px;font:12.5px/1.4 ui-monospace,monospace}
.user>.body>pre,.assistant>.body>pre{font:14px/1.45 system-ui,sans-serif;background:none;padding:.1em 0}
.row{position:relative;padding-left:24px;content-visibility:auto;contain-intrinsic-size:auto 3em}
.band{background:var(--unknown);position:absolute;left:0;top:0;bottom:0;width:14px}
.body{padding:.35em 0;border-bottom:1px solid var(--line);min-width:0}
.t-clean>.band{background:var(--clean)}.t-private>.band{background:var(--private)}.t-untrusted>.band{background:var(--untrusted)}.t-both>.band{background:var(--both)}.t-unknown>.band{background:var(--unknown)}
.role{font-weight:600}.when,.dim{color:var(--dim);font-weight:normal}
details.call{margin:.25em 0;border:1px solid var(--line);border-radius:4px;padding:0 .5em}
details.call>summary{cursor:pointer;font:12.5px/1.8 ui-monospace,monospace;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
details.call[open]>summary{white-space:normal;word-break:break-all}
details.more>summary{cursor:pointer;color:var(--dim)}
.badge{display:inline-block;font:bold 11px/1.6 system-ui,sans-serif;padding:0 .5em;border-radius:8px;margin-left:.4em;color:#fff;background:var(--dim)}
.b-denied,.b-refused,.b-failed{background:#bf3989}.b-interlocked{background:var(--both)}.b-unknown,.b-unanswered{background:#8250df}
.o-interlocked{border-color:var(--both);border-width:2px}.o-denied,.o-refused{border-color:#bf3989}
.event{color:var(--dim)}
.armed{color:var(--both);font-weight:600}
.armed>.band::after{content:"▲";position:absolute;left:1px;top:2px;color:#fff;font-size:12px;line-height:1}
table.config{border-collapse:collapse;font-size:12.5px;margin:.3em 0}
table.config td,table.config th{border:1px solid var(--line);padding:1px 6px;text-align:left;vertical-align:top;word-break:break-all}
tr.changed{background:#fff8c5;color:#1f2328}
.was{color:#9a6700}
.legend span{display:inline-block;width:12px;height:12px;vertical-align:middle;margin:0 4px 0 10px}
.totals th{padding-right:1em}
`

// headTmpl opens a page: everything up to the body's content. It is
// parsed on first use.
var headTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("head").Parse(headText))
})

const headText = `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{{.CSP}}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>` + style + `</style>
<script>` + script + `</script>
</head>
<body>
`

// Head writes the opening of a page titled title: the policy, the
// styles and the script.
func Head(w io.Writer, title string) error {
	return headTmpl().Execute(w, struct{ CSP, Title string }{CSP, title})
}

// Foot closes a page Head opened.
func Foot(w io.Writer) error {
	_, err := io.WriteString(w, "</body>\n</html>\n")
	return err
}
