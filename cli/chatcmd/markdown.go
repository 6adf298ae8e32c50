package chatcmd

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"charm.land/lipgloss/v2/table"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"

	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// markdown renders an answer's Markdown for the terminal: goldmark parses
// it (CommonMark with GitHub's tables, strikethrough, task lists and bare
// links), and the tree is drawn with lipgloss styles: headings, **bold**,
// *italics*, ~~struck~~, `code`, links (their text, then the address),
// bulleted and numbered lists (nested, numbered from where they start),
// quotes after "│", fenced and indented code indented two spaces under
// its language and never wrapped, tables with their borders, rules. Raw
// HTML is shown as the text it is. The text is made visible
// (textfmt.Visible) before it is parsed, so nothing in it reaches the
// terminal as a control sequence; paragraphs are wrapped at the screen's
// width. Without colour the styles are empty and only the layout remains.
//
// goldmark rather than glamour: glamour links chroma, whose lexers are
// parsed at package init (25-30 ms added to every mecha command);
// goldmark's init is about 1.6 ms.
type markdown struct {
	width int
	st    mdStyles
	gm    goldmark.Markdown
}

type mdStyles struct {
	heading, bold, italic, strike, code, block, quote, dim, link lipgloss.Style
}

func newMarkdown(color bool) *markdown {
	md := &markdown{width: 78, gm: goldmark.New(goldmark.WithExtensions(extension.GFM))}
	if color {
		md.st = mdStyles{
			heading: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
			bold:    lipgloss.NewStyle().Bold(true),
			italic:  lipgloss.NewStyle().Italic(true),
			strike:  lipgloss.NewStyle().Strikethrough(true),
			code:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
			block:   lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
			quote:   lipgloss.NewStyle().Faint(true).Italic(true),
			dim:     lipgloss.NewStyle().Faint(true),
			link:    lipgloss.NewStyle().Underline(true).Foreground(lipgloss.Color("4")),
		}
	}
	return md
}

func (md *markdown) setWidth(w int) { md.width = max(w, 20) }

// render renders text, made visible first.
func (md *markdown) render(src string) string {
	b := []byte(textfmt.Visible(src))
	doc := md.gm.Parser().Parse(text.NewReader(b))
	r := &mdRender{md: md, src: b}
	return strings.TrimRight(strings.Join(r.blocks(doc, md.width), "\n\n"), "\n")
}

// mdRender is one rendering: the source the tree points into.
type mdRender struct {
	md  *markdown
	src []byte
}

// blocks renders the block children of n, each as its lines, in width.
func (r *mdRender) blocks(n ast.Node, width int) []string {
	var out []string
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := r.block(c, width); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (r *mdRender) block(n ast.Node, width int) string {
	st := r.md.st
	switch n := n.(type) {
	case *ast.Heading:
		return r.wrap(st.heading.Render(r.inlines(n)), width)
	case *ast.Paragraph, *ast.TextBlock:
		return r.wrap(r.inlines(n), width)
	case *ast.List:
		return r.list(n, width)
	case *ast.Blockquote:
		inner := strings.Join(r.blocks(n, width-2), "\n\n")
		return prefixLines(inner, st.quote.Render("│ "), st.quote.Render("│ "))
	case *ast.FencedCodeBlock:
		var head string
		if lang := string(n.Language(r.src)); lang != "" {
			head = st.dim.Render("  "+lang) + "\n"
		}
		return head + r.code(n)
	case *ast.CodeBlock:
		return r.code(n)
	case *ast.ThematicBreak:
		return st.dim.Render(strings.Repeat("─", min(width, 40)))
	case *ast.HTMLBlock:
		return r.code(n)
	case *east.Table:
		return r.table(n)
	}
	return r.wrap(r.inlines(n), width)
}

// code is a code block's lines, indented and never wrapped.
func (r *mdRender) code(n ast.Node) string {
	lines := n.Lines()
	var out []string
	for i := 0; i < lines.Len(); i++ {
		seg := lines.At(i)
		out = append(out, r.md.st.block.Render("  "+strings.TrimRight(string(seg.Value(r.src)), "\n")))
	}
	return strings.Join(out, "\n")
}

// list renders a list's items with their bullets or numbers; an item's
// further blocks are indented under its first.
func (r *mdRender) list(n *ast.List, width int) string {
	var items []string
	num := n.Start
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		mark := "• "
		if n.IsOrdered() {
			mark = strconv.Itoa(num) + ". "
			num++
		}
		if t, ok := taskMark(c); ok {
			mark += t
		}
		w := lipgloss.Width(mark)
		sep := "\n"
		if !n.IsTight {
			sep = "\n\n"
		}
		inner := strings.Join(r.blocks(c, width-w), sep)
		items = append(items, prefixLines(inner, mark, strings.Repeat(" ", w)))
	}
	if n.IsTight {
		return strings.Join(items, "\n")
	}
	return strings.Join(items, "\n\n")
}

// taskMark is a task list item's box.
func taskMark(item ast.Node) (string, bool) {
	if p := item.FirstChild(); p != nil {
		if cb, ok := p.FirstChild().(*east.TaskCheckBox); ok {
			if cb.IsChecked {
				return "[x] ", true
			}
			return "[ ] ", true
		}
	}
	return "", false
}

// table renders a GitHub table with borders, its header bold.
func (r *mdRender) table(n *east.Table) string {
	t := table.New().Border(lipgloss.NormalBorder())
	for row := n.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, r.inlines(c))
		}
		if _, ok := row.(*east.TableHeader); ok {
			t = t.Headers(cells...)
		} else {
			t = t.Row(cells...)
		}
	}
	bold := r.md.st.bold
	t = t.StyleFunc(func(row, _ int) lipgloss.Style {
		if row == table.HeaderRow {
			return bold.Padding(0, 1)
		}
		return lipgloss.NewStyle().Padding(0, 1)
	})
	return t.Render()
}

// inlines renders the inline children of n as one styled string.
func (r *mdRender) inlines(n ast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		b.WriteString(r.inline(c))
	}
	return b.String()
}

func (r *mdRender) inline(n ast.Node) string {
	st := r.md.st
	switch n := n.(type) {
	case *ast.Text:
		s := string(n.Segment.Value(r.src))
		switch {
		case n.HardLineBreak():
			s += "\n"
		case n.SoftLineBreak():
			s += " "
		}
		return s
	case *ast.String:
		return string(n.Value)
	case *ast.CodeSpan:
		var b strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if t, ok := c.(*ast.Text); ok {
				b.Write(t.Segment.Value(r.src))
			}
		}
		return st.code.Render(b.String())
	case *ast.Emphasis:
		if n.Level >= 2 {
			return st.bold.Render(r.inlines(n))
		}
		return st.italic.Render(r.inlines(n))
	case *east.Strikethrough:
		return st.strike.Render(r.inlines(n))
	case *ast.Link:
		label, dest := r.inlines(n), string(n.Destination)
		if label == dest || label == "" {
			return st.link.Render(dest)
		}
		return st.link.Render(label) + st.dim.Render(" ("+dest+")")
	case *ast.AutoLink:
		return st.link.Render(string(n.URL(r.src)))
	case *ast.Image:
		return st.dim.Render(fmt.Sprintf("[image: %s] (%s)", r.inlines(n), n.Destination))
	case *ast.RawHTML:
		var b strings.Builder
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(r.src))
		}
		return b.String()
	case *east.TaskCheckBox:
		return "" // shown by the list
	}
	return r.inlines(n)
}

// wrap wraps s at width.
func (r *mdRender) wrap(s string, width int) string {
	width = max(width, 10)
	if lipgloss.Width(s) <= width && !strings.Contains(s, "\n") {
		return s
	}
	return lipgloss.NewStyle().Width(width).Render(s)
}

// prefixLines puts first before the first line of s and rest before the others.
func prefixLines(s, first, rest string) string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = first + lines[i]
		} else {
			lines[i] = rest + lines[i]
		}
	}
	return strings.Join(lines, "\n")
}
