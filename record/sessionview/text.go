package sessionview

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TextOptions shape the text rendering.
type TextOptions struct {
	// Color adds terminal emphasis (bold, dim, red).
	Color bool
	// Full shows tool results, thinking, compaction summaries and the
	// system prompt whole instead of their start.
	Full bool
	// Turn shows only that turn (counted from 1), Last only the last that
	// many; zero shows every turn. Not both.
	Turn, Last int
	// Children are the session's child sessions (subagents' runs): each
	// is named under the call that started it, and all in the header.
	Children []Child
}

// Child is a child session and the call of this session it answers.
type Child struct {
	Session string `json:"session"`
	CallID  string `json:"call_id"`
}

// WriteText writes the session at path for a person: its header, then
// the totals (taint, usage, cost at prices, skipped lines), then each
// attach's configuration and what changed, each turn numbered, each call
// with the start of its result, checkpoints and run ends. The file is read
// twice, front to back: once for the totals and the number of turns, once
// to write the turns as they are read. Everything a transcript holds is
// shown through textfmt.Visible: nothing in it reaches a terminal as a
// control sequence.
func WriteText(w io.Writer, path string, prices pricing.Table, opts TextOptions) error {
	var count turnCounter
	t, err := Stream(path, prices, func(it Item) error { count.next(it); return nil })
	if err != nil {
		return err
	}
	from, to, err := opts.turnRange(count.n)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	r := &textRenderer{w: bw, st: textfmt.Style{On: opts.Color}, full: opts.Full, children: opts.Children}
	var turns turnCounter
	_, err = Stream(path, prices, func(it Item) error {
		n := turns.next(it)
		if h, ok := it.(*Header); ok {
			r.header(h)
			r.totals(t)
			r.selection(from, to, count.n)
			return nil
		}
		if max(n, 1) < from || n > to {
			return nil
		}
		r.turn = n
		return r.item(it)
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// turnCounter numbers the turns of a session as its items go by. A turn
// is one reply of the model with what led to it: it starts with the
// person's message (or steering) that the reply answers, a new attach, or
// the reply itself when the model answers tool results; checkpoints, run
// ends and results stay with the turn they follow. Items before the first
// turn are in turn 0.
type turnCounter struct {
	n       int
	replied bool // the current turn has its reply
}

func (c *turnCounter) next(it Item) int {
	switch it := it.(type) {
	case *Reply:
		c.open()
		c.replied = true
	case *User:
		if it.Text() != "" {
			c.open()
		}
	case *Attach:
		c.open()
	}
	return c.n
}

// open starts a turn, unless the current one is still waiting for its
// reply.
func (c *turnCounter) open() {
	if c.replied || c.n == 0 {
		c.n++
		c.replied = false
	}
}

// turnRange is the turns to show of a session that had n at the first
// read. The range is open at the end unless one turn is asked for: turns
// a running session appends before the second read are shown too.
func (o TextOptions) turnRange(n int) (from, to int, err error) {
	switch {
	case o.Turn > 0 && o.Turn > n:
		return 0, 0, fmt.Errorf("the session has %d %s: there is no turn %d", n, textfmt.Plural(n, "turn", "turns"), o.Turn)
	case o.Turn > 0:
		return o.Turn, o.Turn, nil
	case o.Last > 0:
		return max(n-o.Last+1, 1), math.MaxInt, nil
	}
	return 0, math.MaxInt, nil
}

// selection says which turns are shown, when not all are.
func (r *textRenderer) selection(from, to, n int) {
	switch {
	case from <= 1 && to >= n:
		return
	case from == to:
		r.line(r.st.Dim(fmt.Sprintf("── showing turn %d of %d", from, n)))
	default:
		r.line(r.st.Dim(fmt.Sprintf("── showing turns %d–%d of %d", from, n, n)))
	}
}

func (r *textRenderer) turnPrefix() string {
	if r.turn == 0 {
		return ""
	}
	return fmt.Sprintf("turn %d · ", r.turn)
}

type textRenderer struct {
	w    *bufio.Writer
	st   textfmt.Style
	full bool
	// turn is the number of the turn being written (0: before the first).
	turn int
	// imported is the harness an imported session came from, whose
	// config records only what that harness knew.
	imported string
	children []Child
}

func (r *textRenderer) field(name, value string) {
	fmt.Fprintf(r.w, "%-10s %s\n", name, value)
}

func (r *textRenderer) heading(text string) {
	r.w.WriteString("\n")
	r.line(r.st.Bold("── " + text))
}

func (r *textRenderer) line(s string) {
	r.w.WriteString(s)
	r.w.WriteByte('\n')
}

// item renders one item. Writing stops being useful after a write error,
// which bufio keeps and Flush reports; returning it ends the read early.
func (r *textRenderer) item(it Item) error {
	switch it := it.(type) {
	case *Header:
		r.header(it)
	case *Attach:
		r.attach(it)
	case *User:
		r.user(it)
	case *Reply:
		r.reply(it)
	case *Aside:
		r.aside(it)
	case *Checkpoint:
		r.line(r.st.Dim("── taint checkpoint: " + taintWords(it.Taint)))
		if it.Armed {
			r.line(r.st.Red("── armed: from here the conversation holds private data and untrusted content; " +
				"the trifecta interlock refuses calls that could send data out"))
		}
	case *RunEnd:
		s := it.Summary
		line := fmt.Sprintf("── run finished: %s %s", textfmt.Count(s.Turns), textfmt.Plural(s.Turns, "turn", "turns"))
		if s.StopReason != "" {
			line += ", " + vis(s.StopReason)
		}
		line += fmt.Sprintf(" · %s in / %s out", textfmt.Count(s.Usage.InputTokens), textfmt.Count(s.Usage.OutputTokens))
		if s.Error != "" {
			line += " · error: " + vis(s.Error)
		}
		r.line(r.st.Dim(line))
	case *Compacted:
		c := it.Compaction
		r.line(r.st.Dim(fmt.Sprintf("── compacted: the first %s %s of the session replaced by a summary of %s chars (%s in / %s out)",
			textfmt.Count(c.Replaces), textfmt.Plural(c.Replaces, "message", "messages"), textfmt.Count(len(c.Summary)),
			textfmt.Count(c.Usage.InputTokens), textfmt.Count(c.Usage.OutputTokens))))
		if r.full {
			r.line(textfmt.Visible(c.Summary))
		}
	case *Served:
		r.served(it.Call, it.NoResult)
	case *Other:
		r.line(r.st.Dim(fmt.Sprintf("── %q record (not known to this version of mecha)", it.Record.Kind())))
	}
	_, err := r.w.Write(nil)
	return err
}

func (r *textRenderer) header(h *Header) {
	m := h.Meta
	r.field("session", r.st.Bold(vis(m.ID)))
	r.field("title", vis(m.Title))
	r.field("created", m.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	r.field("model", vis(m.Provider+"/"+m.Model))
	r.field("workspace", vis(m.Workspace))
	if m.ReplayOf != "" {
		r.field("replays", vis(m.ReplayOf))
	}
	if m.RerunOf != "" {
		r.field("reruns", vis(m.RerunOf))
	}
	if m.ReflectsOn != "" {
		r.field("reflects", vis(m.ReflectsOn))
	}
	if m.Distill {
		r.field("distills", "reflections into rules")
	}
	if p := m.Parent; p != nil {
		r.field("parent", vis(p.Session+" (call "+p.CallID+")"))
	}
	if len(r.children) > 0 {
		ids := make([]string, len(r.children))
		for i, c := range r.children {
			ids[i] = c.Session
		}
		r.field("children", vis(strings.Join(ids, ", ")))
	}
	if c := m.MCPClient; c != nil {
		r.field("client", peerWords(*c))
	}
	if f := m.ImportedFrom; f != nil {
		r.field("imported", vis(f.Harness+" "+f.Path))
		if w := f.SkippedWords(); w != "" {
			r.field("skipped", vis(w))
		}
		r.imported = vis(f.Harness)
	}
	r.field("file", vis(h.Path))
}

func (r *textRenderer) totals(t *Totals) {
	r.w.WriteString("\n")
	r.line(r.st.Bold("totals"))
	r.field("taint", describeTaint(t))
	if t.Interlocked > 0 {
		r.field("interlock", fmt.Sprintf("%s %s refused by the trifecta interlock", textfmt.Count(t.Interlocked), textfmt.Plural(t.Interlocked, "call", "calls")))
	}
	if t.Served > 0 {
		r.field("mcp calls", textfmt.Count(t.Served))
	}
	r.field("usage", fmt.Sprintf("%s input · %s output · %s cache read · %s cache write tokens over %s %s",
		textfmt.Sum(t.Usage.InputTokens), textfmt.Sum(t.Usage.OutputTokens), textfmt.Sum(t.Usage.CacheReadTokens), textfmt.Sum(t.Usage.CacheWriteTokens),
		textfmt.Sum(t.Turns), textfmt.Plural(t.Turns, "turn", "turns")))
	if t.Priced {
		r.field("cost", textfmt.Dollars(t.CostUSD)+" at today's configured prices")
	} else {
		r.field("cost", "— (no price for this model in mecha's table or config.toml)")
	}
	if t.Skips.Count > 0 {
		var parts []string
		for _, sk := range t.Skips.Lines {
			what := "unparseable"
			switch {
			case sk.Oversized:
				what = fmt.Sprintf("longer than %s bytes", textfmt.Count(transcript.MaxLine))
			case sk.Torn:
				what = "torn final line"
			}
			parts = append(parts, fmt.Sprintf("line %d (%s)", sk.Line, what))
		}
		r.field("skipped", fmt.Sprintf("%d %s: %s", t.Skips.Count, textfmt.Plural(t.Skips.Count, "line", "lines"), strings.Join(parts, ", ")))
	}
	if t.Skips.HeaderID != "" {
		r.field("note", vis(session.ForeignIDNote(t.Path, t.Skips.HeaderID)))
	}
}

func describeTaint(t *Totals) string {
	var flags []string
	if t.Taint.Private {
		flags = append(flags, "private")
	}
	if t.Taint.Untrusted {
		flags = append(flags, "untrusted")
	}
	state := "clean"
	if len(flags) > 0 {
		state = strings.Join(flags, ", ")
	}
	if t.Uncovered > 0 {
		return state + " so far; the last messages have no checkpoint after them, so their provenance is unknown"
	}
	return state
}

func (r *textRenderer) user(u *User) {
	for _, b := range u.Orphans {
		r.heading("tool result for an unknown call " + vis(b.ToolUseID))
		r.result(b.Content, b.IsError)
	}
	var text []string
	for _, b := range u.Message.Content {
		if b.Type == transcript.BlockText {
			text = append(text, b.Text)
		}
	}
	text = append(text, u.Images()...)
	if len(text) == 0 {
		return
	}
	h := "user"
	if u.Results {
		h = "user (steering, sent mid-run with tool results)"
	}
	r.heading(r.turnPrefix() + h + r.st.Dim(atSuffix(u.Message.At)))
	r.line(textfmt.Visible(strings.Join(text, "\n")))
}

func (r *textRenderer) reply(rp *Reply) {
	m := rp.Message
	r.heading(r.turnPrefix() + "assistant" + r.st.Dim(atSuffix(m.At)))
	calls := rp.Calls
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			r.line(textfmt.Visible(b.Text))
		case transcript.BlockThinking:
			t := b.Thinking
			if !r.full {
				t, _ = textfmt.Bounded(textfmt.OneLine(t), 1, 160)
			}
			r.line(r.st.Dim("[thinking] " + textfmt.Visible(t)))
		case transcript.BlockToolUse:
			c := calls[0]
			calls = calls[1:]
			fmt.Fprintf(r.w, "→ %s %s\n", r.st.Bold(vis(c.Name)), vis(textfmt.JSON(c.Input, 300)))
			if c.Outcome() == Interlocked {
				r.line("  " + r.st.Red("■ refused by the trifecta interlock"))
			}
			for _, k := range r.children {
				if k.CallID == c.ID {
					r.line("  ⤷ subagent session " + r.st.Bold(k.Session))
				}
			}
			if c.Result != nil {
				r.result(c.Result.Content, c.Result.IsError)
			} else {
				r.line(r.st.Dim("  (no result recorded)"))
			}
		default:
			r.line(r.st.Dim("[" + vis(b.Type) + " block]"))
		}
	}
}

// aside renders a message of a role mecha does not write: its role, then
// its blocks as they are.
func (r *textRenderer) aside(a *Aside) {
	m := a.Message
	r.heading(textfmt.Clip(vis(m.Role), 40) + " (a role this version of mecha does not write)" + r.st.Dim(atSuffix(m.At)))
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			r.line(textfmt.Visible(b.Text))
		case transcript.BlockToolResult:
			r.result(b.Content, b.IsError)
		default:
			r.line(r.st.Dim("[" + vis(b.Type) + " block]"))
		}
	}
}

func (r *textRenderer) result(text string, isError bool) {
	note := ""
	if !r.full {
		text, note = textfmt.Bounded(text, 8, 600)
	}
	text = textfmt.Visible(text)
	bar := "  │ "
	if isError {
		bar = "  " + r.st.Red("✗") + " "
	}
	if text == "" {
		r.line(bar + r.st.Dim("(empty)"))
	}
	for line := range strings.Lines(text) {
		r.line(bar + strings.TrimRight(line, "\n"))
	}
	if note != "" {
		r.line("  " + r.st.Dim(note+" (--full shows all)"))
	}
}

func (r *textRenderer) attach(a *Attach) {
	c := a.Config
	when := ""
	if !c.At.IsZero() {
		when = ", " + c.At.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if a.Prev != nil {
		var changes []string
		for _, ch := range a.Changes {
			if ch.Field == "system_prompt" {
				changes = append(changes, "system prompt changed")
				continue
			}
			if ch.Field == "tool_specs" {
				if ch.From != nil { // specs recorded for the first time are no change
					changes = append(changes, "tool specs changed")
				}
				continue
			}
			changes = append(changes, fmt.Sprintf("%s %s → %s", ch.Field, showValue(ch.From), showValue(ch.To)))
		}
		summary := "unchanged"
		if len(changes) > 0 {
			summary = "changed: " + strings.Join(changes, "; ")
		}
		r.heading(fmt.Sprintf("config (attach %d%s) %s", a.N, when, summary))
		if !r.full || len(changes) == 0 {
			return
		}
	} else {
		r.heading(fmt.Sprintf("config (attach %d%s)", a.N, when))
	}
	if r.imported != "" && a.Prev == nil {
		// Null settings read as zero values; say they were never known.
		fmt.Fprintf(r.w, "%s · tools: %s\n", vis(c.Provider+"/"+c.Model), vis(strings.Join(c.Tools, ", ")))
		fmt.Fprintf(r.w, "imported from %s: no other setting was recorded\n", r.imported)
		return
	}
	f := configFields(c)
	fmt.Fprintf(r.w, "mecha %s · %s · tools: %s\n", vis(c.MechaVersion), vis(c.Provider+"/"+c.Model), vis(strings.Join(c.Tools, ", ")))
	fmt.Fprintf(r.w, "max_tokens %d · max_turns %d · max_output_tokens %s · max_cost_usd %s\n",
		c.MaxTokens, c.MaxTurns, showValue(f["max_output_tokens"]), showValue(f["max_cost_usd"]))
	fmt.Fprintf(r.w, "compact_at_tokens %s (keep %d recent) · temperature %s · seed %s · effort %s · thinking %s · cache_prompt %s\n",
		showValue(f["compact_at_tokens"]), c.CompactKeepRecent, showValue(f["temperature"]), showValue(f["seed"]), showValue(f["effort"]),
		flagValue(f["thinking"]), flagValue(f["cache_prompt"]))
	if u := c.MCPUpstream; u != nil {
		where := u.URL
		if u.Transport == "stdio" {
			where = strings.Join(append([]string{u.Command}, u.Args...), " ")
		}
		fmt.Fprintf(r.w, "upstream %s %s · %s\n", vis(u.Transport), vis(where), peerWords(u.Server))
	}
	sb := ""
	if c.SandboxNamespaces {
		sb += " · namespaces"
	}
	if len(c.SandboxAllowDomains) > 0 {
		sb += " · reaches only " + vis(strings.Join(c.SandboxAllowDomains, ", "))
	}
	if len(c.SandboxReadDeny) > 0 {
		sb += fmt.Sprintf(" · %d paths unreadable", len(c.SandboxReadDeny))
	}
	fmt.Fprintf(r.w, "permission %s · trifecta %s · sandbox %s (network %s)%s\n",
		vis(c.PermissionMode), vis(c.Trifecta), vis(c.Sandbox), onOff(c.SandboxNetwork), sb)
	if t := c.WorkspaceTrust; t != nil {
		state := "untrusted"
		if t.Trusted {
			state = "trusted"
		}
		why := "by " + t.By
		if t.Entry != "" {
			why += ", entry " + t.Entry
		}
		fmt.Fprintf(r.w, "workspace %s (%s)\n", state, vis(why))
	}
	for _, pr := range c.PermissionRules {
		fmt.Fprintf(r.w, "rule: %s %s (%s)\n", vis(pr.Effect), vis(pr.Rule), vis(pr.Source))
	}
	switch {
	case c.SystemPrompt == nil:
		r.line("system prompt: none")
	case r.full:
		fmt.Fprintf(r.w, "system prompt (%s chars):\n%s\n", textfmt.Count(len(*c.SystemPrompt)), textfmt.Visible(*c.SystemPrompt))
	default:
		p, _ := textfmt.Bounded(textfmt.OneLine(*c.SystemPrompt), 1, 100)
		fmt.Fprintf(r.w, "system prompt (%s chars): %s\n", textfmt.Count(len(*c.SystemPrompt)), textfmt.Visible(p))
	}
}

// served renders a tool_call record: the call as the client made it, then
// its result as text (each content block that is not text as a one-line
// placeholder) or the protocol error that answered it.
func (r *textRenderer) served(c *transcript.ToolCall, noResult string) {
	id := "?"
	if len(c.ID) > 0 && string(c.ID) != "null" {
		id = vis(string(c.ID))
	}
	took := strconv.FormatFloat(c.DurationMS, 'f', -1, 64) + " ms"
	if noResult != "" {
		took = "unanswered"
	}
	r.heading(fmt.Sprintf("mcp call %s", id) + r.st.Dim(fmt.Sprintf(" · %s · %s", c.StartedAt.UTC().Format("2006-01-02 15:04:05.000 UTC"), took)))
	fmt.Fprintf(r.w, "→ %s %s\n", r.st.Bold(vis(c.Tool)), vis(textfmt.JSON(c.Arguments, 300)))
	if noResult != "" {
		r.result(noResult, true)
		return
	}
	if c.Error != "" {
		r.result("error: "+c.Error, true)
		return
	}
	r.result(contentText(c.Content), c.IsError)
}

// contentText is the text of MCP content blocks: text blocks as they are,
// any other block as a one-line placeholder naming its type.
func contentText(raw json.RawMessage) string {
	var blocks []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		MIMEType string `json:"mimeType"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return textfmt.JSON(raw, 300)
	}
	parts := make([]string, 0, len(blocks))
	for _, b := range blocks {
		switch {
		case b.Type == "text":
			parts = append(parts, b.Text)
		case b.MIMEType != "":
			parts = append(parts, fmt.Sprintf("[%s block, %s]", b.Type, b.MIMEType))
		default:
			parts = append(parts, "["+b.Type+" block]")
		}
	}
	return strings.Join(parts, "\n")
}

func peerWords(p transcript.MCPPeer) string {
	s := p.Name + " " + p.Version
	if p.ProtocolVersion != "" {
		s += " (protocol " + p.ProtocolVersion + ")"
	}
	return vis(s)
}

// ContentText is the text of an MCP tool_call record's content blocks:
// text blocks as they are, any other block as a one-line placeholder.
func ContentText(raw json.RawMessage) string { return contentText(raw) }
