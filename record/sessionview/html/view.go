package html

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"os"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// DefaultCut is how much of a long text the page shows before "show all".
const DefaultCut = 8 << 10

// DefaultBudget is about how many bytes a page holds (chosen from
// measurement in Chromium: docs/PERFORMANCE.md).
const DefaultBudget = 8 << 20

// Preview is how much of a long text a page with no sidecar shows once
// it is past its budget.
const Preview = 512

// Options shape the page.
type Options struct {
	// Cut is how many bytes of a long text are shown before the rest is
	// folded away (0: DefaultCut).
	Cut int
	// Budget bounds a page's size in bytes (0: DefaultBudget). A cut
	// text's whole text goes in the page if the page stays under Budget
	// with it, else to Files. Once the page reaches Budget bytes, the
	// session continues in a next part, a page in Files, after the next
	// taint checkpoint (or after any row at twice the budget, if no
	// checkpoint comes). Without Files there is one page: past Budget
	// bytes, long texts show their first Preview bytes and the rest is
	// left out.
	Budget int
	// Files is the sidecar the whole texts and the parts past the budget
	// are written to; nil: none (the page goes to a stream).
	Files *Sidecar
}

// Write writes the session at path as a page, as it reads the file.
// Costs are at prices. The errors are sessionview.Stream's and w's.
func Write(w io.Writer, path string, prices pricing.Table, opts Options) error {
	if opts.Cut <= 0 {
		opts.Cut = DefaultCut
	}
	if opts.Budget <= 0 {
		opts.Budget = DefaultBudget
	}
	r := &renderer{cut: opts.Cut, budget: opts.Budget, files: opts.Files}
	r.setOutput(w, nil)
	if opts.Files != nil {
		r.link = opts.Files.link + "/"
	}
	t, err := sessionview.Stream(path, prices, r.item)
	if err != nil {
		r.closePart()
		return err
	}
	if r.err == nil {
		r.totals(t)
	}
	return r.endPart()
}

// renderer writes items as rows. segment counts the checkpoints read: the
// band of a row is painted when the checkpoint after it is read.
type renderer struct {
	w        *bufio.Writer
	out      *counter // what w writes to: the page, or the current part
	file     *os.File // the current part's file (nil: the page)
	part     int      // the current part's number (1: the page)
	link     string   // the sidecar as the current page links it ("" in a part)
	title    string   // the session's title, for the parts' headers
	id       string
	cut      int
	budget   int      // about how many bytes a page may hold
	pending  int      // bytes of text taken for the row being built
	files    *Sidecar // where whole texts and parts past the budget go; nil: nowhere
	err      error
	segment  int
	painted  [4][]int // segments by the band they get: clean, private, untrusted, both
	armed    bool
	imported string
}

func (r *renderer) exec(name string, data any) {
	if r.err == nil {
		r.err = tmpl().ExecuteTemplate(r.w, name, data)
	}
	r.pending = 0
}

// row is what every row template gets: its segment and its content.
type row struct {
	Seg  int
	Line int
	Data any
}

func (r *renderer) row(name string, it sessionview.Item, data any) {
	r.exec(name, row{Seg: r.segment, Line: it.Line(), Data: data})
}

func (r *renderer) item(it sessionview.Item) error {
	switch it := it.(type) {
	case *sessionview.Header:
		r.header(it)
	case *sessionview.Attach:
		r.row("attach", it, r.attach(it))
	case *sessionview.User:
		r.user(it)
	case *sessionview.Reply:
		r.row("reply", it, r.reply(it))
	case *sessionview.Aside:
		r.row("aside", it, r.aside(it))
	case *sessionview.Checkpoint:
		r.checkpoint(it)
		r.maybeBreak(true)
		return r.err
	case *sessionview.RunEnd:
		r.row("runend", it, runEnd(it))
	case *sessionview.Compacted:
		c := it.Compaction
		r.row("compacted", it, struct {
			Replaces int
			Usage    transcript.Usage
			Summary  long
		}{c.Replaces, c.Usage, r.long(c.Summary)})
	case *sessionview.Served:
		r.row("served", it, r.served(it.Call, it.NoResult))
	case *sessionview.Other:
		r.row("other", it, it.Record.Kind())
	}
	r.maybeBreak(false)
	return r.err
}

// long is a text that may be cut: Shown is its start; when it was cut,
// the whole text is Full (in the page), or the file at Href (the
// sidecar), or neither (Omitted: past the budget with no sidecar).
type long struct {
	Shown, Full, Size string
	// Markdown is the text rendered (an assistant's text, whole).
	Markdown template.HTML
	Href     string
	Cut      bool
	Omitted  bool
	Empty    bool
}

// long cuts s to what the page shows. A text longer than the cut shows
// its start, with the whole text folded below it if the page stays under
// its budget with it, else in a file of the sidecar, linked. With no
// sidecar the whole text is left out, and once the page is past its
// budget a long text shows only a Preview.
func (r *renderer) long(s string) long {
	cut := r.cut
	if r.size() >= r.budget && r.files == nil {
		cut = min(cut, Preview)
	}
	l := long{Shown: s, Empty: s == ""}
	if len(s) > cut {
		end := cut
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		l = long{Shown: s[:end], Cut: true, Size: textfmt.Count(len(s))}
		switch {
		case r.size()+end+len(s) <= r.budget:
			l.Full = s
		case r.files != nil:
			if name, err := r.files.add(s); err != nil {
				r.err = err
			} else {
				l.Href = r.link + name
			}
		default:
			l.Omitted = true
		}
	}
	r.pending += len(l.Shown) + len(l.Full)
	return l
}

// input is a call's arguments: whole while the page is under its budget,
// past it cut like any long text.
func (r *renderer) input(raw json.RawMessage) (string, *long) {
	s := prettyJSON(raw)
	if r.size() < r.budget {
		r.pending += len(s)
		return s, nil
	}
	l := r.long(s)
	return "", &l
}

type headerView struct {
	Meta     transcript.Meta
	Path     string
	Title    string
	Created  string
	Imported string
	// Skipped says what of an import's source was not imported.
	Skipped string
}

func (r *renderer) header(h *sessionview.Header) {
	m := h.Meta
	title := textfmt.Clip(textfmt.OneLine(m.Title), 120)
	if title == "" {
		title = m.ID
	}
	hv := headerView{Meta: m, Path: h.Path, Title: title, Created: m.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC")}
	if f := m.ImportedFrom; f != nil {
		hv.Imported = f.Harness + " " + f.Path
		hv.Skipped = f.SkippedWords()
		r.imported = f.Harness
	}
	r.title, r.id = title, m.ID
	if r.err = Head(r.w, "mecha session "+m.ID+" · "+title); r.err != nil {
		return
	}
	r.exec("header", hv)
}

type setting struct {
	Name, Value string
	Long        *long
	Changed     bool
	Was         string
}

type attachView struct {
	N        int
	When     string
	First    bool
	Changes  []string
	Settings []setting
	Imported string
}

func (r *renderer) attach(a *sessionview.Attach) attachView {
	v := attachView{N: a.N, First: a.Prev == nil}
	if a.Prev == nil {
		v.Imported = r.imported
	}
	if !a.Config.At.IsZero() {
		v.When = a.Config.At.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	was := map[string]any{}
	for _, ch := range a.Changes {
		if ch.Field == "tool_specs" && ch.From == nil {
			continue // specs recorded for the first time are no change
		}
		was[ch.Field] = ch.From
		v.Changes = append(v.Changes, ch.Field)
	}
	fields := sessionview.ConfigFields(a.Config)
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		s := setting{Name: k}
		from, changed := was[k]
		s.Changed = changed
		switch k {
		case "system_prompt", "tool_specs", "mcp_servers", "mcp_upstream":
			l := r.long(settingText(fields[k]))
			s.Long = &l
			if changed {
				s.Was = "changed"
			}
		default:
			s.Value = sessionview.ShowValue(fields[k])
			if changed {
				s.Was = sessionview.ShowValue(from)
			}
		}
		v.Settings = append(v.Settings, s)
	}
	return v
}

// settingText is a long setting as text: a string as it is, anything else
// as indented JSON.
func settingText(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	}
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

type textView struct {
	Role, When string
	Steering   bool
	Text       long
}

type resultView struct {
	ID     string
	Result long
	Error  bool
}

func (r *renderer) user(u *sessionview.User) {
	for _, b := range u.Orphans {
		r.row("orphan", u, resultView{ID: b.ToolUseID, Result: r.long(b.Content), Error: b.IsError})
	}
	text := strings.Join(append([]string{u.Text()}, u.Images()...), "\n")
	text = strings.TrimPrefix(text, "\n")
	if text == "" {
		return
	}
	r.row("user", u, textView{Role: "user", When: when(u.Message), Steering: u.Results, Text: r.long(text)})
}

// part is one block of a reply, in content order.
type part struct {
	Text     *long
	Thinking *long
	Call     *callView
	Other    string
}

type callView struct {
	Name, Args, Input string
	Outcome, Badge    string
	LongInput         *long // the arguments, cut, once past the budget
	Result            *long
	Error             bool
}

func (r *renderer) reply(rp *sessionview.Reply) any {
	calls := rp.Calls
	var parts []part
	for _, b := range rp.Message.Content {
		switch b.Type {
		case transcript.BlockText:
			if b.Text != "" {
				l := r.long(b.Text)
				if !l.Cut {
					if h, ok := renderMarkdown(b.Text); ok {
						l.Markdown = h
						r.pending += len(h)
					}
				}
				parts = append(parts, part{Text: &l})
			}
		case transcript.BlockThinking:
			l := r.long(b.Thinking)
			parts = append(parts, part{Thinking: &l})
		case transcript.BlockToolUse:
			c := calls[0]
			calls = calls[1:]
			parts = append(parts, part{Call: r.call(c)})
		default:
			parts = append(parts, part{Other: b.Type})
		}
	}
	return struct {
		When  string
		Parts []part
	}{when(rp.Message), parts}
}

var outcomes = map[sessionview.Outcome][2]string{
	sessionview.Unanswered:  {"unanswered", "no result recorded"},
	sessionview.Succeeded:   {"ok", ""},
	sessionview.Failed:      {"failed", "error"},
	sessionview.Denied:      {"denied", "denied"},
	sessionview.Refused:     {"refused", "refused"},
	sessionview.Unknown:     {"unknown", "outcome unknown"},
	sessionview.Interlocked: {"interlocked", "refused by the trifecta interlock"},
}

func (r *renderer) call(c sessionview.Call) *callView {
	o := outcomes[c.Outcome()]
	v := &callView{Name: c.Name, Args: textfmt.JSON(c.Input, 200), Outcome: o[0], Badge: o[1]}
	v.Input, v.LongInput = r.input(c.Input)
	if c.Result != nil {
		l := r.long(c.Result.Content)
		v.Result, v.Error = &l, c.Result.IsError
	}
	return v
}

// prettyJSON indents a call's input; input that is not JSON stays as it is.
func prettyJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

func (r *renderer) aside(a *sessionview.Aside) any {
	m := a.Message
	var parts []part
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			l := r.long(b.Text)
			parts = append(parts, part{Text: &l})
		case transcript.BlockToolResult:
			l := r.long(b.Content)
			parts = append(parts, part{Text: &l})
		default:
			parts = append(parts, part{Other: b.Type})
		}
	}
	return struct {
		Role, When string
		Parts      []part
	}{textfmt.Clip(textfmt.OneLine(m.Role), 40), when(m), parts}
}

func (r *renderer) served(c *transcript.ToolCall, noResult string) any {
	id := "?"
	if len(c.ID) > 0 && string(c.ID) != "null" {
		id = string(c.ID)
	}
	cv := &callView{Name: c.Tool, Args: textfmt.JSON(c.Arguments, 200), Outcome: "ok"}
	cv.Input, cv.LongInput = r.input(c.Arguments)
	text := sessionview.ContentText(c.Content)
	if c.Error != "" {
		text = "error: " + c.Error
	}
	took := fmt.Sprintf("%v ms", c.DurationMS)
	if noResult != "" {
		text, took = noResult, "unanswered"
	}
	l := r.long(text)
	cv.Result, cv.Error = &l, c.Error != "" || c.IsError || noResult != ""
	if cv.Error {
		cv.Outcome, cv.Badge = "failed", "error"
	}
	if noResult != "" {
		cv.Outcome, cv.Badge = "unknown", "no result"
	}
	return struct {
		ID, When string
		Call     *callView
	}{id, fmt.Sprintf("%s · %s", c.StartedAt.UTC().Format("2006-01-02 15:04:05.000 UTC"), took), cv}
}

var bands = [4]string{"clean", "private", "untrusted", "both"}

var bandIndex = map[string]int{"clean": 0, "private": 1, "untrusted": 2, "both": 3}

// bands writes the one style element that paints each segment's band with
// the taint of the checkpoint after it. It comes last: a style element
// read while the page is parsed makes the browser restyle all that came
// before, which one per checkpoint turns quadratic. Only numbers and fixed
// names go into it.
func (r *renderer) bands() error {
	var b []byte
	for i, segs := range r.painted {
		if len(segs) == 0 {
			continue
		}
		for j, s := range segs {
			if j > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, ".s%d>.band", s)
		}
		b = fmt.Appendf(b, "{background:var(--%s)}\n", bands[i])
	}
	if len(b) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(r.w, "<style>\n%s</style>\n", b)
	return err
}

// taintClass is the band class of a merged taint.
func taintClass(t transcript.Taint) string {
	switch {
	case t.Private && t.Untrusted:
		return "both"
	case t.Private:
		return "private"
	case t.Untrusted:
		return "untrusted"
	}
	return "clean"
}

func (r *renderer) checkpoint(c *sessionview.Checkpoint) {
	class := taintClass(c.Merged)
	r.painted[bandIndex[class]] = append(r.painted[bandIndex[class]], r.segment)
	r.segment++
	r.exec("checkpoint", struct {
		Class, Taint, Merged string
		Armed                bool
		Messages             int
		Line                 int
	}{class, sessionview.TaintWords(c.Taint), sessionview.TaintWords(c.Merged), c.Armed, c.To - c.From, c.Line()})
	r.armed = r.armed || c.Armed
}

type runEndView struct {
	Turns             int
	StopReason, Error string
	Provider, Model   string
	Usage             transcript.Usage
	Cost              string
}

func runEnd(e *sessionview.RunEnd) runEndView {
	s := e.Summary
	v := runEndView{Turns: s.Turns, StopReason: s.StopReason, Error: textfmt.OneLine(s.Error), Provider: e.Provider, Model: e.Model, Usage: s.Usage, Cost: "no price configured"}
	if e.Priced {
		v.Cost = textfmt.Dollars(e.CostUSD)
	}
	return v
}

func (r *renderer) totals(t *sessionview.Totals) {
	cost := "— (no price for this model in mecha's table or config.toml)"
	if t.Priced {
		cost = textfmt.Dollars(t.CostUSD) + " at today's configured prices"
	}
	var skipped []string
	for _, sk := range t.Skips.Lines {
		what := "unparseable"
		switch {
		case sk.Oversized:
			what = "too long"
		case sk.Torn:
			what = "torn final line"
		}
		skipped = append(skipped, fmt.Sprintf("line %d (%s)", sk.Line, what))
	}
	taint := sessionview.TaintWords(t.Taint)
	if t.Uncovered > 0 {
		taint += fmt.Sprintf(" so far; the last %d %s no checkpoint after them, so their provenance is unknown",
			t.Uncovered, textfmt.Plural(t.Uncovered, "message has", "messages have"))
	}
	r.exec("totals", struct {
		T       *sessionview.Totals
		Taint   string
		Cost    string
		Skipped string
		Armed   bool
	}{t, taint, cost, strings.Join(skipped, ", "), r.armed})
}

func when(m *transcript.Message) string {
	if m.At.IsZero() {
		return ""
	}
	return m.At.UTC().Format("15:04:05")
}
