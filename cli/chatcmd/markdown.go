package chatcmd

import (
	"regexp"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// markdown styles an answer's Markdown for the terminal line by line,
// with regular expressions rather than a parser. After leading spaces, a
// line starting with "#" is a heading (its marks dropped), one starting
// with ">" a quote (shown after "│"), and one starting with "-", "*" or
// "+" and a space a bullet (shown as "•"); the lines between two ```
// fences are a code block (indented two spaces, the fences dropped, the
// language shown above it, never wrapped); elsewhere **bold**, __bold__
// and `code` spans are styled. Everything else (italics, links, tables,
// numbered lists, ~~~ fences) is left as written. The text is made visible
// (textfmt.Visible) before anything else, and each line outside a code
// block is wrapped at the screen's width. Without colour the styles are
// empty and only the marks change.
//
// It is small on purpose: glamour, the usual choice, links chroma, whose
// lexer definitions are parsed at package init: about 25-30 ms of init
// added to every mecha command, not only the chat.
type markdown struct {
	width int
	st    mdStyles
}

type mdStyles struct {
	heading, bold, code, block, quote, dim lipgloss.Style
}

func newMarkdown(color bool) *markdown {
	md := &markdown{width: 78}
	if color {
		md.st = mdStyles{
			heading: lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("6")),
			bold:    lipgloss.NewStyle().Bold(true),
			code:    lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
			block:   lipgloss.NewStyle().Foreground(lipgloss.Color("3")),
			quote:   lipgloss.NewStyle().Faint(true).Italic(true),
			dim:     lipgloss.NewStyle().Faint(true),
		}
	}
	return md
}

func (md *markdown) setWidth(w int) { md.width = max(w, 20) }

var (
	mdBold   = regexp.MustCompile(`\*\*([^*\n]+)\*\*|__([^_\n]+)__`)
	mdCode   = regexp.MustCompile("`([^`\n]+)`")
	mdBullet = regexp.MustCompile(`^(\s*)[-*+] `)
)

// render renders text, made visible first.
func (md *markdown) render(text string) string {
	var out []string
	inCode := false
	for _, line := range strings.Split(textfmt.Visible(text), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			inCode = !inCode
			if lang := strings.TrimPrefix(trimmed, "```"); inCode && lang != "" {
				out = append(out, md.st.dim.Render("  "+lang))
			}
		case inCode:
			out = append(out, md.st.block.Render("  "+line))
		case strings.HasPrefix(trimmed, "#"):
			out = append(out, md.wrap(md.st.heading.Render(md.inline(strings.TrimLeft(trimmed, "# ")))))
		case strings.HasPrefix(trimmed, ">"):
			out = append(out, md.wrap(md.st.quote.Render("│ "+md.inline(strings.TrimSpace(strings.TrimPrefix(trimmed, ">"))))))
		default:
			line = mdBullet.ReplaceAllString(line, "$1• ")
			out = append(out, md.wrap(md.inline(line)))
		}
	}
	return strings.Join(out, "\n")
}

// inline styles bold text and inline code.
func (md *markdown) inline(s string) string {
	s = mdCode.ReplaceAllStringFunc(s, func(m string) string { return md.st.code.Render(m[1 : len(m)-1]) })
	return mdBold.ReplaceAllStringFunc(s, func(m string) string { return md.st.bold.Render(m[2 : len(m)-2]) })
}

func (md *markdown) wrap(s string) string {
	if lipgloss.Width(s) <= md.width {
		return s
	}
	return lipgloss.NewStyle().Width(md.width).Render(s)
}
