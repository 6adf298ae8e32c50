package sessionview

// A copy of the show command as it was before sessionview (commit
// 8bfd48b: everything loaded, then printed), with the changes made to
// its output since (arguments shown in the order written, by
// textfmt.JSON; a change of tool specs named, not dumped; the totals
// right after the header; each user message and reply headed with the
// number of its turn). It is the
// simple, in-memory oracle the streaming renderers must match byte for
// byte.

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// sessionCost prices every summary at today's table, attributing each to
// the provider and model it names. ok is false when any of them has no price.
func sessionCost(table pricing.Table, s *session.Session) (usd float64, ok bool) {
	ok = true
	for _, sum := range s.Summaries() {
		prov, model := Attribute(s.Meta, sum)
		c, priced := table.Cost(prov, model, sum.Usage)
		ok = ok && priced
		usd += c
	}
	if len(s.Summaries()) == 0 {
		_, ok = table.Lookup(s.Meta.Provider, s.Meta.Model)
	}
	return usd, ok
}

type showJSON struct {
	ID      string            `json:"id"`
	Path    string            `json:"path"`
	Meta    transcript.Meta   `json:"meta"`
	Records []json.RawMessage `json:"records"`
	Taint   transcript.Taint  `json:"taint"`
	Usage   transcript.Usage  `json:"usage"`
	Turns   int               `json:"turns"`
	CostUSD *float64          `json:"cost_usd"`
	Skipped int               `json:"skipped_lines"`
	Details []oracleSkipped   `json:"skipped,omitempty"`
}

type oracleSkipped struct {
	Line  int    `json:"line"`
	Torn  bool   `json:"torn"`
	Error string `json:"error"`
}

// oracleShow is what "sessions show" printed before sessionview: the
// whole transcript loaded, then rendered.
func OracleShow(out io.Writer, path string, prices pricing.Table, asJSON, full, color bool) error {
	s, err := session.Load(path)
	if err != nil {
		return err
	}
	s.Path = path
	usage, turns := s.UsageTotals()
	cost, priced := sessionCost(prices, s)
	if asJSON {
		out2 := showJSON{ID: s.Meta.ID, Path: s.Path, Meta: s.Meta, Records: []json.RawMessage{}, Taint: s.Taint(),
			Usage: usage, Turns: turns, Skipped: s.Skipped}
		for _, r := range s.Records {
			line, err := transcript.Encode(r)
			if err != nil {
				return err
			}
			out2.Records = append(out2.Records, json.RawMessage(line))
		}
		if priced {
			out2.CostUSD = &cost
		}
		for _, sk := range s.SkippedLines {
			out2.Details = append(out2.Details, oracleSkipped{sk.Line, sk.Torn, sk.Err})
		}
		return writeJSON(out, out2)
	}
	r := &renderer{w: out, st: textfmt.Style{On: color}, full: full}
	r.header(s)
	defer r.session(s)
	fmt.Fprintln(r.w)
	fmt.Fprintln(r.w, r.st.Bold("totals"))
	r.field("taint", oracleTaint(s))
	if n := oracleInterlocked(s); n > 0 {
		r.field("interlock", fmt.Sprintf("%s %s refused by the trifecta interlock", textfmt.Count(n), textfmt.Plural(n, "call", "calls")))
	}
	r.field("usage", fmt.Sprintf("%s input · %s output · %s cache read · %s cache write tokens over %s %s",
		textfmt.Count(usage.InputTokens), textfmt.Count(usage.OutputTokens), textfmt.Count(usage.CacheReadTokens), textfmt.Count(usage.CacheWriteTokens),
		textfmt.Count(turns), textfmt.Plural(turns, "turn", "turns")))
	if priced {
		r.field("cost", textfmt.Dollars(cost)+" at today's configured prices")
	} else {
		r.field("cost", "— (no price for this model in mecha's table or config.toml)")
	}
	if s.Skipped > 0 {
		var parts []string
		for _, sk := range s.SkippedLines {
			what := "unparseable"
			if sk.Torn {
				what = "torn final line"
			}
			parts = append(parts, fmt.Sprintf("line %d (%s)", sk.Line, what))
		}
		r.field("skipped", fmt.Sprintf("%d %s: %s", s.Skipped, textfmt.Plural(s.Skipped, "line", "lines"), strings.Join(parts, ", ")))
	}
	return nil
}

// oracleInterlocked counts the results of called tools that the interlock
// refused.
func oracleInterlocked(s *session.Session) int {
	called := map[string]bool{}
	n := 0
	for _, m := range s.Messages() {
		for _, b := range m.Content {
			switch {
			case b.Type == transcript.BlockToolUse:
				called[b.ID] = true
			case b.Type == transcript.BlockToolResult && called[b.ToolUseID] && b.IsError && !b.OutcomeUnknown &&
				strings.HasPrefix(b.Content, tool.RefusalPrefix):
				n++
				delete(called, b.ToolUseID)
			}
		}
	}
	return n
}

func oracleTaint(s *session.Session) string {
	var known bool
	for _, c := range s.TaintTimeline() {
		known = c.Known
	}
	t := s.Taint()
	var flags []string
	if t.Private {
		flags = append(flags, "private")
	}
	if t.Untrusted {
		flags = append(flags, "untrusted")
	}
	state := "clean"
	if len(flags) > 0 {
		state = strings.Join(flags, ", ")
	}
	if !known && len(s.Messages()) > 0 {
		return state + " so far; the last messages have no checkpoint after them, so their provenance is unknown"
	}
	return state
}

type renderer struct {
	w    io.Writer
	st   textfmt.Style
	full bool
	// turn is the number of the current turn, replied whether it has its
	// reply: a turn opens at a config record, a user message with text or
	// a reply, unless the turn before it is still waiting for its reply.
	turn    int
	replied bool
}

func (r *renderer) openTurn() {
	if r.replied || r.turn == 0 {
		r.turn++
		r.replied = false
	}
}

func (r *renderer) field(name, value string) {
	fmt.Fprintf(r.w, "%-10s %s\n", name, value)
}

func (r *renderer) heading(text string) {
	fmt.Fprintln(r.w)
	fmt.Fprintln(r.w, r.st.Bold("── "+text))
}

func (r *renderer) header(s *session.Session) {
	m := s.Meta
	r.field("session", r.st.Bold(m.ID))
	r.field("title", textfmt.OneLine(m.Title))
	r.field("created", m.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	r.field("model", m.Provider+"/"+m.Model)
	r.field("workspace", m.Workspace)
	if m.ReplayOf != "" {
		r.field("replays", m.ReplayOf)
	}
	if m.RerunOf != "" {
		r.field("reruns", m.RerunOf)
	}
	if m.ReflectsOn != "" {
		r.field("reflects", m.ReflectsOn)
	}
	if m.Distill {
		r.field("distills", "reflections into rules")
	}
	r.field("file", s.Path)
}

func (r *renderer) session(s *session.Session) {
	results := map[string]transcript.Block{}
	for _, msg := range s.Messages() {
		for _, b := range msg.Content {
			if b.Type == transcript.BlockToolResult {
				results[b.ToolUseID] = b
			}
		}
	}
	called := map[string]bool{}
	var merged transcript.Taint
	var prev *transcript.Config
	attach := 0
	for _, rec := range s.Records {
		switch rec := rec.(type) {
		case *transcript.Config:
			r.openTurn()
			attach++
			r.config(attach, prev, rec)
			prev = rec
		case *transcript.Message:
			r.message(rec, results, called)
		case *transcript.Taint:
			fmt.Fprintln(r.w, r.st.Dim("── taint checkpoint: "+taintWords(*rec)))
			before := merged.Private && merged.Untrusted
			merged = merged.Merge(*rec)
			if !before && merged.Private && merged.Untrusted {
				fmt.Fprintln(r.w, r.st.Red("── armed: from here the conversation holds private data and untrusted content; "+
					"the trifecta interlock refuses calls that could send data out"))
			}
		case *transcript.Summary:
			line := fmt.Sprintf("── run finished: %s %s", textfmt.Count(rec.Turns), textfmt.Plural(rec.Turns, "turn", "turns"))
			if rec.StopReason != "" {
				line += ", " + rec.StopReason
			}
			line += fmt.Sprintf(" · %s in / %s out", textfmt.Count(rec.Usage.InputTokens), textfmt.Count(rec.Usage.OutputTokens))
			if rec.Error != "" {
				line += " · error: " + textfmt.OneLine(rec.Error)
			}
			fmt.Fprintln(r.w, r.st.Dim(line))
		case *transcript.Compaction:
			fmt.Fprintln(r.w, r.st.Dim(fmt.Sprintf("── compacted: the first %s %s of the session replaced by a summary of %s chars (%s in / %s out)",
				textfmt.Count(rec.Replaces), textfmt.Plural(rec.Replaces, "message", "messages"), textfmt.Count(len(rec.Summary)),
				textfmt.Count(rec.Usage.InputTokens), textfmt.Count(rec.Usage.OutputTokens))))
			if r.full {
				fmt.Fprintln(r.w, rec.Summary)
			}
		case *transcript.Unknown:
			fmt.Fprintln(r.w, r.st.Dim(fmt.Sprintf("── %q record (not known to this version of mecha)", rec.Kind())))
		}
	}
}

func (r *renderer) message(m *transcript.Message, results map[string]transcript.Block, called map[string]bool) {
	if m.Role == transcript.RoleUser {
		var text []string
		hasResults := false
		for _, b := range m.Content {
			switch b.Type {
			case transcript.BlockText:
				text = append(text, b.Text)
			case transcript.BlockToolResult:
				hasResults = true
				if !called[b.ToolUseID] {
					r.heading("tool result for an unknown call " + b.ToolUseID)
					r.result(b)
				}
			}
		}
		if transcript.TextOf(m.Content) != "" {
			r.openTurn()
		}
		if len(text) == 0 {
			return
		}
		h := "user"
		if hasResults {
			h = "user (steering, sent mid-run with tool results)"
		}
		r.heading(fmt.Sprintf("turn %d · ", r.turn) + h + r.st.Dim(atSuffix(m.At)))
		fmt.Fprintln(r.w, strings.Join(text, "\n"))
		return
	}
	r.openTurn()
	r.replied = true
	r.heading(fmt.Sprintf("turn %d · ", r.turn) + "assistant" + r.st.Dim(atSuffix(m.At)))
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			fmt.Fprintln(r.w, b.Text)
		case transcript.BlockThinking:
			t := b.Thinking
			if !r.full {
				t, _ = textfmt.Bounded(textfmt.OneLine(t), 1, 160)
			}
			fmt.Fprintln(r.w, r.st.Dim("[thinking] "+t))
		case transcript.BlockToolUse:
			called[b.ID] = true
			fmt.Fprintf(r.w, "→ %s %s\n", r.st.Bold(b.Name), textfmt.JSON(b.Input, 300))
			if res, ok := results[b.ID]; ok {
				if res.IsError && !res.OutcomeUnknown && strings.HasPrefix(res.Content, tool.RefusalPrefix) {
					fmt.Fprintln(r.w, "  "+r.st.Red("■ refused by the trifecta interlock"))
				}
				r.result(res)
			} else {
				fmt.Fprintln(r.w, r.st.Dim("  (no result recorded)"))
			}
		default:
			fmt.Fprintln(r.w, r.st.Dim("["+b.Type+" block]"))
		}
	}
}

func (r *renderer) result(b transcript.Block) {
	text, note := b.Content, ""
	if !r.full {
		text, note = textfmt.Bounded(text, 8, 600)
	}
	bar := "  │ "
	if b.IsError {
		bar = "  " + r.st.Red("✗") + " "
	}
	if text == "" {
		fmt.Fprintln(r.w, bar+r.st.Dim("(empty)"))
	}
	for line := range strings.Lines(text) {
		fmt.Fprintln(r.w, bar+strings.TrimRight(line, "\n"))
	}
	if note != "" {
		fmt.Fprintln(r.w, "  "+r.st.Dim(note+" (--full shows all)"))
	}
}

func (r *renderer) config(n int, prev, c *transcript.Config) {
	when := ""
	if !c.At.IsZero() {
		when = ", " + c.At.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if prev != nil {
		a, b := configFields(prev), configFields(c)
		var changes []string
		keys := make([]string, 0, len(b))
		for k := range b {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if reflect.DeepEqual(a[k], b[k]) {
				continue
			}
			if k == "system_prompt" {
				changes = append(changes, "system prompt changed")
				continue
			}
			if k == "tool_specs" {
				if a[k] != nil {
					changes = append(changes, "tool specs changed")
				}
				continue
			}
			changes = append(changes, fmt.Sprintf("%s %s → %s", k, showValue(a[k]), showValue(b[k])))
		}
		summary := "unchanged"
		if len(changes) > 0 {
			summary = "changed: " + strings.Join(changes, "; ")
		}
		r.heading(fmt.Sprintf("config (attach %d%s) %s", n, when, summary))
		if !r.full || len(changes) == 0 {
			return
		}
	} else {
		r.heading(fmt.Sprintf("config (attach %d%s)", n, when))
	}
	opt := func(v any) string { return showValue(v) }
	f := configFields(c)
	fmt.Fprintf(r.w, "mecha %s · %s/%s · tools: %s\n", c.MechaVersion, c.Provider, c.Model, strings.Join(c.Tools, ", "))
	fmt.Fprintf(r.w, "max_tokens %d · max_turns %d · max_output_tokens %s · max_cost_usd %s\n",
		c.MaxTokens, c.MaxTurns, opt(f["max_output_tokens"]), opt(f["max_cost_usd"]))
	fmt.Fprintf(r.w, "compact_at_tokens %s (keep %d recent) · temperature %s · seed %s · effort %s · thinking %s · cache_prompt %s\n",
		opt(f["compact_at_tokens"]), c.CompactKeepRecent, opt(f["temperature"]), opt(f["seed"]), opt(f["effort"]),
		onOff(c.Thinking), onOff(c.CachePrompt))
	fmt.Fprintf(r.w, "permission %s · trifecta %s · sandbox %s (network %s)\n",
		c.PermissionMode, c.Trifecta, c.Sandbox, onOff(c.SandboxNetwork))
	switch {
	case c.SystemPrompt == nil:
		fmt.Fprintln(r.w, "system prompt: none")
	case r.full:
		fmt.Fprintf(r.w, "system prompt (%s chars):\n%s\n", textfmt.Count(len(*c.SystemPrompt)), *c.SystemPrompt)
	default:
		p, _ := textfmt.Bounded(textfmt.OneLine(*c.SystemPrompt), 1, 100)
		fmt.Fprintf(r.w, "system prompt (%s chars): %s\n", textfmt.Count(len(*c.SystemPrompt)), p)
	}
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
