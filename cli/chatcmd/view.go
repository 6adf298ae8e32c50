package chatcmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/transcript"
)

type entryKind int

const (
	kUser entryKind = iota
	kAssistant
	kStream
	kTool
	kSteer
	kNote
	kError
)

// entry is one item of the conversation. Text is already made visible,
// except an answer's, which the Markdown renderer gets escaped.
type entry struct {
	kind entryKind
	text string
	// A tool call: the call, and once done its outcome.
	call   *transcript.Block
	done   bool
	failed bool
	size   int
	took   time.Duration
	// thinking is an answer's thinking, shown folded under it.
	thinking string
	// rendered caches an answer's Markdown at width.
	rendered string
	width    int
}

// styles are the chat's colours; plain when colour is off.
type styles struct {
	user, dim, ok, bad, steer, status, ask lipgloss.Style
}

// newStyles are the chat's styles, plain without colour.
func newStyles(color bool) styles {
	if !color {
		return styles{}
	}
	return styles{
		user:   lipgloss.NewStyle().Bold(true),
		dim:    lipgloss.NewStyle().Faint(true),
		ok:     lipgloss.NewStyle().Foreground(lipgloss.Color("2")),
		bad:    lipgloss.NewStyle().Foreground(lipgloss.Color("1")),
		steer:  lipgloss.NewStyle().Foreground(lipgloss.Color("5")),
		status: lipgloss.NewStyle().Reverse(true),
		ask:    lipgloss.NewStyle().Border(lipgloss.RoundedBorder()).BorderForeground(lipgloss.Color("3")),
	}
}

// status is what the status line shows.
type status struct {
	id, provider, model string
	// usage and cost are the session's before the run in progress; run
	// is that run's so far.
	usage  transcript.Usage
	cost   float64
	priced bool
	run    transcript.Usage
	taint  transcript.Taint
}

// addRun counts a finished run's usage into the session's.
func (s *status) addRun(prices pricing.Table, u transcript.Usage) {
	s.usage = s.usage.Add(u)
	if c, ok := prices.Cost(s.provider, s.model, u); ok {
		s.cost += c
		s.priced = true
	}
}

// fromSession sets the usage and cost a session recorded.
func (s *status) fromSession(prices pricing.Table, sums []*transcript.Summary) {
	s.usage, s.cost, s.priced, s.run = transcript.Usage{}, 0, false, transcript.Usage{}
	for _, sum := range sums {
		s.usage = s.usage.Add(sum.Usage)
		if c, ok := prices.Cost(sum.Provider, sum.Model, sum.Usage); ok {
			s.cost += c
			s.priced = true
		}
	}
}

// totals are the usage and cost so far, the run in progress included.
func (s *status) totals(prices pricing.Table) (transcript.Usage, string) {
	u, cost, priced := s.usage.Add(s.run), s.cost, s.priced
	if c, ok := prices.Cost(s.provider, s.model, s.run); ok {
		cost += c
		priced = true
	}
	if !priced {
		return u, "—"
	}
	return u, textfmt.Dollars(cost)
}

// line is the status line in at most width cells. When the whole does
// not fit, parts give way in this order: the hint that Esc interrupts, the
// provider's name before the model's, the session id, the token counts,
// and last the model's name is clipped, or dropped. The state, the taint
// and the cost stay while there is room for them.
func (s *status) line(prices pricing.Table, running bool, width int) string {
	id := s.id
	if id == "" {
		id = "new session"
	}
	u, cost := s.totals(prices)
	state, hint := "ready", ""
	if running {
		state, hint = "working", " (Esc interrupts)"
	}
	model := textfmt.Visible(s.model)
	parts := struct{ hint, provider, id, tokens string }{
		hint, textfmt.Visible(s.provider) + "/", textfmt.Visible(id),
		textfmt.Count(u.InputTokens) + " in / " + textfmt.Count(u.OutputTokens) + " out",
	}
	render := func() string {
		out := []string{state + parts.hint, taintState(s.taint)}
		if parts.id != "" {
			out = append(out, parts.id)
		}
		if m := parts.provider + model; m != "" {
			out = append(out, m)
		}
		if parts.tokens != "" {
			out = append(out, parts.tokens)
		}
		return " " + strings.Join(append(out, "cost "+cost), " · ") + " "
	}
	line := render()
	for _, give := range []*string{&parts.hint, &parts.provider, &parts.id, &parts.tokens} {
		if lipgloss.Width(line) <= width {
			return line
		}
		*give = ""
		line = render()
	}
	if over := lipgloss.Width(line) - width; over > 0 {
		if n := utf8.RuneCountInString(model) - over; n >= 2 {
			model = textfmt.Clip(model, n)
		} else {
			model, parts.provider = "", ""
		}
		line = render()
	}
	return textfmt.Clip(line, width)
}

// renderEntry renders one entry of the conversation.
func (m *model) renderEntry(e *entry) string {
	switch e.kind {
	case kUser: // a prompt of many lines (a paste) in one block
		return m.st.user.Render("> " + strings.ReplaceAll(e.text, "\n", "\n  "))
	case kAssistant:
		if e.rendered == "" || e.width != m.md.width {
			e.rendered, e.width = m.md.render(e.text), m.md.width
		}
		return strings.TrimPrefix(e.rendered+m.thinkingView(e), "\n")
	case kStream:
		return textfmt.Visible(e.text)
	case kTool:
		return m.toolLine(e)
	case kSteer:
		return m.st.steer.Render("↳ steering " + e.text)
	case kError:
		return m.st.bad.Render("error: " + e.text)
	}
	return m.st.dim.Render(e.text)
}

// thinkingView is an answer's thinking: a folded line saying how long it
// is, or with Ctrl-T its text, dim, after "┆ ".
func (m *model) thinkingView(e *entry) string {
	if e.thinking == "" {
		return ""
	}
	text := textfmt.Visible(e.thinking)
	if !m.showThinking {
		n := strings.Count(text, "\n") + 1
		return "\n" + m.st.dim.Render(fmt.Sprintf("▸ thinking, %s line%s (Ctrl-T shows it)", textfmt.Count(n), plural(n)))
	}
	wrapped := lipgloss.NewStyle().Width(max(m.md.width-2, 10)).Render(text)
	return "\n" + m.st.dim.Render("▾ thinking (Ctrl-T folds it)") + "\n" + m.st.dim.Render(prefixLines(wrapped, "┆ ", "┆ "))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// toolLine is a call as one line: a spinner while it runs, then ✓ or ✗,
// the result's size and the time it took.
func (m *model) toolLine(e *entry) string {
	what := textfmt.Visible(e.call.Name) + " " + m.st.dim.Render(textfmt.Visible(callSummary(e.call)))
	if !e.done {
		return m.sp.View() + " " + what
	}
	took := "" // unknown for a call shown from the record
	if e.took >= 0 {
		took = " · " + e.took.Round(time.Millisecond).String()
	}
	if e.failed {
		return m.st.bad.Render("✗") + " " + what + m.st.dim.Render(took+" · "+textfmt.Visible(e.text))
	}
	return m.st.ok.Render("✓") + " " + what + m.st.dim.Render(" · "+textfmt.Count(e.size)+" B"+took)
}

// callSummary is a call's input in a few words: the command, the path, or
// its arguments clipped.
func callSummary(b *transcript.Block) string {
	in := b.Input
	var fields map[string]any
	if err := json.Unmarshal(in, &fields); err == nil {
		for _, k := range []string{"command", "path", "url"} {
			if s, ok := fields[k].(string); ok {
				return textfmt.Clip(textfmt.OneLine(s), 70)
			}
		}
	}
	return textfmt.JSON(in, 70)
}

// askView is the permission prompt shown first, "" for none.
func (m *model) askView() string {
	if len(m.asks) == 0 {
		return ""
	}
	a := m.asks[0]
	var b strings.Builder
	if a.trust != "" {
		return m.trustView(a)
	}
	fmt.Fprintf(&b, "%s wants to run", textfmt.Visible(a.req.Tool))
	if a.req.Reason != "" {
		fmt.Fprintf(&b, " (%s)", textfmt.Visible(a.req.Reason))
	}
	fmt.Fprintf(&b, ":\n%s\n", a.detail)
	if m.denying {
		b.WriteString("denied: type why, for the model, and press Enter (Enter alone: no reason)  [esc] interrupt")
	} else if m.in.ready {
		b.WriteString("[y] allow once  [n] deny  [a] allow " + textfmt.Visible(a.req.Tool) + " for the rest of the session  [esc] interrupt")
		if a.rule != "" {
			b.WriteString("\n[r] always allow " + textfmt.Visible(a.rule) + " here (a rule saved for this workspace)")
		}
	} else {
		b.WriteString(m.st.dim.Render("(keys go to the input box; the choices show once the keyboard has been still for a second)  [esc] interrupt"))
	}
	if more := len(m.asks) - 1; more > 0 {
		fmt.Fprintf(&b, "  (%d more waiting)", more)
	}
	w := m.width - 2
	if w < 20 {
		w = 20
	}
	return m.st.ask.Width(w).Render(b.String())
}

// layout sizes the viewport to what the other parts leave.
func (m *model) layout() {
	h := m.high - m.ta.Height() - 1
	for _, extra := range []string{m.searchView(), m.pickerView(), m.slashMenuView(), m.belowView()} {
		if extra != "" {
			h -= lipgloss.Height(extra)
		}
	}
	if a := m.askView(); a != "" {
		h -= lipgloss.Height(a)
	}
	if h < 3 {
		h = 3
	}
	m.vp.SetWidth(m.width)
	m.vp.SetHeight(h)
}

// refresh lays the conversation out again, following its end unless the
// person scrolled up.
// Whether it follows is judged before the screen is laid out again, so
// that a chat at its end stays there when the window is resized or the
// input box grows; one scrolled up that gets more output below shows a
// marker until the end is in view (End, PgDn, the wheel).
func (m *model) refresh() {
	follow := m.vp.AtBottom() || m.vp.TotalLineCount() <= m.vp.Height()
	lines := m.vp.TotalLineCount()
	m.layout()
	m.vp.SetContent(m.conversation())
	switch {
	case follow:
		m.vp.GotoBottom()
		m.below = false
	case m.vp.AtBottom():
		m.below = false
	case m.vp.TotalLineCount() > lines && lines > 0:
		m.below = true
	}
	m.layout() // with the marker's line, or without it
}

// conversation is the conversation as the screen shows it, at its width.
func (m *model) conversation() string {
	parts := make([]string, 0, len(m.entries))
	for i := range m.entries {
		e := &m.entries[i]
		if e.kind == kNote && e.text == "" {
			continue
		}
		if e.kind == kUser && len(parts) > 0 {
			parts = append(parts, "") // a blank line before each prompt
		}
		parts = append(parts, m.renderEntry(e))
	}
	return lipgloss.NewStyle().Width(m.width).Render(strings.Join(parts, "\n"))
}

// scrollback is the conversation for the terminal's own screen, its
// lines without the padding that fills the chat's window.
func (m *model) scrollback() string {
	lines := strings.Split(m.conversation(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// belowView is the marker of output below while scrolled up.
func (m *model) belowView() string {
	if !m.below {
		return ""
	}
	return m.st.ok.Render("↓ new output below (End goes there)")
}

// View is the screen, on the alternate screen as a full-window program.
func (m *model) View() tea.View {
	parts := []string{m.vp.View()}
	if b := m.belowView(); b != "" {
		parts = append(parts, b)
	}
	if a := m.askView(); a != "" {
		parts = append(parts, a)
	}
	var line string
	if m.running { // alive while the model thinks and nothing streams yet
		sp := m.sp.View()
		line = sp + m.status.line(m.eng.door.Config().Prices(), m.running, m.width-lipgloss.Width(sp))
	} else {
		line = m.status.line(m.eng.door.Config().Prices(), m.running, m.width)
	}
	parts = append(parts, m.st.status.Render(line))
	for _, extra := range []string{m.searchView(), m.pickerView(), m.slashMenuView()} {
		if extra != "" {
			parts = append(parts, extra)
		}
	}
	parts = append(parts, m.ta.View())
	v := tea.NewView(strings.Join(parts, "\n"))
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion // the wheel scrolls the conversation
	v.ReportFocus = true                  // notifications only when not focused
	m.drawn()                             // the program draws after each message
	return v
}

// trustView is the question about the workspace the chat opened in.
func (m *model) trustView(a askMsg) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Do you trust the files in %s?\n", textfmt.Visible(a.trust))
	b.WriteString("A repository can hold text written to steer an agent. Untrusted, what the tools read here counts as untrusted content (tools that could send it out are then refused) and its AGENTS.md is left out of the system prompt.\n")
	if m.in.ready {
		b.WriteString("[y] trust this folder (and the folders in it)  [n] not now")
	} else {
		b.WriteString(m.st.dim.Render("(keys go to the input box; the choices show once the keyboard has been still for a second)"))
	}
	w := m.width - 2
	if w < 20 {
		w = 20
	}
	return m.st.ask.Width(w).Render(b.String())
}
