package sessionview

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/transcript"
)

// MarkdownOptions shape the Markdown rendering.
type MarkdownOptions struct {
	// Lines and Bytes bound each tool result and compaction summary
	// shown (0: 20 lines, 2,000 bytes).
	Lines, Bytes int
}

// WriteMarkdown writes the session at path as Markdown to paste into a
// pull request or an issue, as it reads the file: a table of its meta,
// the task (the first prompt), each later prompt, the assistant's text,
// each tool call as a <details> block holding its arguments and the start
// of its result, config changes, the armed point, compactions and runs,
// then the answer (the last assistant text) and the usage.
//
// Nothing from the transcript can change the document's structure: text
// goes into fenced blocks whose fence is longer than any run of backticks
// in it, one-line text outside a fence has every ASCII punctuation
// character backslash-escaped (CommonMark shows it literally), and text in
// the HTML of a <details> summary is HTML-escaped.
func WriteMarkdown(w io.Writer, path string, prices pricing.Table, opts MarkdownOptions) error {
	if opts.Lines <= 0 {
		opts.Lines = 20
	}
	if opts.Bytes <= 0 {
		opts.Bytes = 2000
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	r := &mdRenderer{w: bw, opts: opts}
	t, err := Stream(path, prices, r.item)
	if err != nil {
		return err
	}
	r.end(t)
	return bw.Flush()
}

type mdRenderer struct {
	w      *bufio.Writer
	opts   MarkdownOptions
	task   bool   // the first prompt has been written
	answer string // the last assistant text so far
}

func (r *mdRenderer) item(it Item) error {
	switch it := it.(type) {
	case *Header:
		r.header(it)
	case *Attach:
		if it.Prev != nil {
			r.attach(it)
		}
	case *User:
		r.user(it)
	case *Reply:
		r.reply(it)
	case *Aside:
		fmt.Fprintf(r.w, "**%s** (a role this version of mecha does not write)\n\n", MarkdownEscape(it.Message.Role))
		MarkdownFence(r.w, transcript.TextOf(it.Message.Content))
	case *Checkpoint:
		if it.Armed {
			r.w.WriteString("> **Armed:** from here the conversation holds private data and untrusted content; the trifecta interlock refuses calls that could send data out.\n\n")
		}
	case *RunEnd:
		s := it.Summary
		line := fmt.Sprintf("run finished: %s %s", textfmt.Count(s.Turns), textfmt.Plural(s.Turns, "turn", "turns"))
		if s.StopReason != "" {
			line += ", " + s.StopReason
		}
		line += fmt.Sprintf(" · %s in / %s out tokens", textfmt.Count(s.Usage.InputTokens), textfmt.Count(s.Usage.OutputTokens))
		if it.Priced {
			line += " · " + textfmt.Dollars(it.CostUSD)
		}
		if s.Error != "" {
			line += " · error: " + s.Error
		}
		fmt.Fprintf(r.w, "*%s*\n\n", MarkdownEscape(line))
	case *Compacted:
		c := it.Compaction
		fmt.Fprintf(r.w, "*compacted: the first %s %s replaced by a summary*\n\n", textfmt.Count(c.Replaces), textfmt.Plural(c.Replaces, "message", "messages"))
		r.details("summary of the compacted messages", c.Summary, "")
	case *Served:
		c := it.Call
		text := ContentText(c.Content)
		if c.Error != "" {
			text = "error: " + c.Error
		}
		if it.NoResult != "" {
			text = it.NoResult
		}
		r.details("MCP call → "+c.Tool+" "+textfmt.JSON(c.Arguments, 200), text, "")
	}
	_, err := r.w.Write(nil)
	return err
}

func (r *mdRenderer) header(h *Header) {
	m := h.Meta
	title := textfmt.OneLine(m.Title)
	if title == "" {
		title = m.ID
	}
	fmt.Fprintf(r.w, "# %s\n\n", MarkdownEscape(textfmt.Clip(title, 200)))
	r.w.WriteString("| | |\n| --- | --- |\n")
	row := func(k, v string) { fmt.Fprintf(r.w, "| %s | %s |\n", k, markdownCode(v)) }
	row("session", m.ID)
	row("model", m.Provider+"/"+m.Model)
	row("created", m.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	row("workspace", m.Workspace)
	if m.ReplayOf != "" {
		row("replays", m.ReplayOf)
	}
	if f := m.ImportedFrom; f != nil {
		row("imported", f.Harness+" "+f.Path)
		if w := f.SkippedWords(); w != "" {
			row("skipped", w)
		}
	}
	r.w.WriteString("\n")
}

func (r *mdRenderer) attach(a *Attach) {
	var parts []string
	for _, ch := range a.Changes {
		switch {
		case ch.Field == "tool_specs" && ch.From == nil:
		case ch.Field == "system_prompt" || ch.Field == "tool_specs":
			parts = append(parts, strings.ReplaceAll(ch.Field, "_", " ")+" changed")
		default:
			parts = append(parts, fmt.Sprintf("%s %s → %s", ch.Field, showValue(ch.From), showValue(ch.To)))
		}
	}
	what := "unchanged"
	if len(parts) > 0 {
		what = "changed: " + strings.Join(parts, "; ")
	}
	fmt.Fprintf(r.w, "**Attach %d** (%s)\n\n", a.N, MarkdownEscape(what))
}

func (r *mdRenderer) user(u *User) {
	for _, b := range u.Orphans {
		r.details("result for an unknown call "+b.ToolUseID, b.Content, "")
	}
	text := strings.TrimPrefix(strings.Join(append([]string{u.Text()}, u.Images()...), "\n"), "\n")
	if text == "" {
		return
	}
	switch {
	case u.Results:
		r.w.WriteString("**User** (steering, sent mid-run with tool results)\n\n")
	case !r.task:
		r.task = true
		r.w.WriteString("## Task\n\n")
	default:
		r.w.WriteString("## User\n\n")
	}
	MarkdownFence(r.w, text)
}

func (r *mdRenderer) reply(rp *Reply) {
	calls := rp.Calls
	for _, b := range rp.Message.Content {
		switch b.Type {
		case transcript.BlockText:
			if b.Text == "" {
				continue
			}
			r.w.WriteString("**Assistant**\n\n")
			MarkdownFence(r.w, b.Text)
			r.answer = b.Text
		case transcript.BlockToolUse:
			c := calls[0]
			calls = calls[1:]
			r.call(c)
		}
	}
}

var mdOutcome = map[Outcome]string{
	Unanswered: " · no result recorded", Failed: " · error", Denied: " · DENIED", Refused: " · REFUSED",
	Unknown: " · outcome unknown", Interlocked: " · REFUSED by the trifecta interlock",
}

func (r *mdRenderer) call(c Call) {
	result := ""
	if c.Result != nil {
		result = c.Result.Content
	}
	r.details("→ "+c.Name+" "+textfmt.JSON(c.Input, 200)+mdOutcome[c.Outcome()], result, string(c.Input))
}

// details writes a collapsed block: summary (HTML-escaped), then the
// arguments when given and the start of text in fences.
func (r *mdRenderer) details(summary, text, args string) {
	// In <code>: GitHub neither links nor mentions what a code element holds.
	fmt.Fprintf(r.w, "<details><summary><code>%s</code></summary>\n\n", html.EscapeString(textfmt.OneLine(summary)))
	if args != "" {
		MarkdownFence(r.w, args)
	}
	shown, note := textfmt.Bounded(text, r.opts.Lines, r.opts.Bytes)
	if shown == "" {
		shown = "(empty)"
	}
	MarkdownFence(r.w, shown)
	if note != "" {
		fmt.Fprintf(r.w, "*%s*\n\n", MarkdownEscape(note))
	}
	r.w.WriteString("</details>\n\n")
}

func (r *mdRenderer) end(t *Totals) {
	if r.answer != "" {
		r.w.WriteString("## Answer\n\n")
		MarkdownFence(r.w, r.answer)
	}
	r.w.WriteString("## Usage\n\n| | |\n| --- | --- |\n")
	at := ""
	if t.Saturated() {
		at = "at least "
	}
	fmt.Fprintf(r.w, "| tokens | %s%s input · %s output · %s cache read · %s cache write |\n", at,
		textfmt.Sum(t.Usage.InputTokens), textfmt.Sum(t.Usage.OutputTokens), textfmt.Sum(t.Usage.CacheReadTokens), textfmt.Sum(t.Usage.CacheWriteTokens))
	fmt.Fprintf(r.w, "| turns | %s in %s %s |\n", textfmt.Sum(t.Turns), textfmt.Count(t.Runs), textfmt.Plural(t.Runs, "run", "runs"))
	fmt.Fprintf(r.w, "| tool calls | %s (%d denied, %d refused, %d refused by the interlock) |\n", textfmt.Count(t.Calls), t.Denied, t.Refused, t.Interlocked)
	cost := "no price configured"
	if t.Priced {
		cost = textfmt.Dollars(t.CostUSD) + " at today's configured prices"
	}
	fmt.Fprintf(r.w, "| cost | %s |\n", MarkdownEscape(cost))
	fmt.Fprintf(r.w, "| taint | %s |\n", MarkdownEscape(describeTaint(t)))
}

// MarkdownFence writes text as a fenced block whose fence of backticks is
// longer than any run of backticks in it, so no line of the text can
// close it.
func MarkdownFence(w io.Writer, text string) {
	n, run := 3, 0
	for i := 0; i < len(text); i++ {
		if text[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", n)
	text = strings.TrimSuffix(text, "\n")
	fmt.Fprintf(w, "%stext\n%s\n%s\n\n", fence, text, fence)
}

// markdownCode makes text one inline code span for a table cell: white
// space folded, delimited by more backticks than any run in it, and its
// pipes escaped (GFM splits cells before it reads code spans).
func markdownCode(s string) string {
	s = textfmt.OneLine(s)
	if s == "" {
		return ""
	}
	n, run := 1, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			n = max(n, run+1)
		} else {
			run = 0
		}
	}
	d := strings.Repeat("`", n)
	return d + " " + strings.ReplaceAll(s, "|", "\\|") + " " + d
}

// MarkdownEscape makes text one line that CommonMark shows literally:
// white space folded, every ASCII punctuation character backslash-escaped
// (no emphasis, link, HTML tag, entity, table cell or heading can start).
func MarkdownEscape(s string) string {
	s = textfmt.OneLine(s)
	var b strings.Builder
	for _, c := range s {
		if c < 0x80 && strings.ContainsRune("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}
