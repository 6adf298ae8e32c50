package html

import (
	"bytes"
	"html/template"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// An assistant's text is Markdown, and the page shows it rendered (when
// it is whole; a cut text stays the text it is, in a <pre>): goldmark,
// CommonMark with GitHub's tables, strikethrough, task lists and bare
// links, with raw HTML off (each raw tag is left out, noted by a comment)
// and links and images whose address is dangerous (javascript:,
// vbscript:, file:, data: other than an image) written without it, so
// they cannot be clicked. The page's Content-Security-Policy stands
// behind it: nothing the text could smuggle in is fetched or run.
var safeMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// unsafeMarkdown renders raw HTML and every address: only the tests'
// control uses it, to show the attack they stop would work without the
// guard.
var unsafeMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))

// markdownRenderer is the renderer the page uses (a test swaps it).
var markdownRenderer = safeMarkdown

// renderMarkdown is text's Markdown as HTML, false when goldmark fails.
func renderMarkdown(text string) (template.HTML, bool) {
	var b bytes.Buffer
	if err := markdownRenderer.Convert([]byte(text), &b); err != nil {
		return "", false
	}
	return template.HTML(b.String()), true // #nosec: raw HTML off, dangerous URLs dropped (above)
}
