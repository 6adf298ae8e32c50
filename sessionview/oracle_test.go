package sessionview_test

// A copy of the show command as it was before sessionview (commit
// 8bfd48b: everything loaded, then printed), with the two changes made to
// its output since (arguments shown in the order written, by
// textfmt.JSON; a change of tool specs named, not dumped). It is the
// simple, in-memory oracle the streaming renderers must match byte for
// byte.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/pricing"
	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/transcript"
)

// sessionCost prices every summary at today's table, attributing each to
// the provider and model it names. ok is false when any of them has no price.
func sessionCost(table pricing.Table, s *session.Session) (usd float64, ok bool) {
	ok = true
	for _, sum := range s.Summaries() {
		prov, model := attribute(s.Meta, sum)
		c, priced := table.Cost(prov, model, sum.Usage)
		ok = ok && priced
		usd += c
	}
	if len(s.Summaries()) == 0 {
		_, ok = table.Lookup(s.Meta.Provider, s.Meta.Model)
	}
	return usd, ok
}

// attribute says whose tokens a summary counts: its own provider and model,
// or the session's for summaries that predate those fields.
func attribute(m transcript.Meta, s *transcript.Summary) (string, string) {
	prov, model := s.Provider, s.Model
	if prov == "" {
		prov = m.Provider
	}
	if model == "" {
		model = m.Model
	}
	return prov, model
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
	Details []skippedJSON     `json:"skipped,omitempty"`
}

type skippedJSON struct {
	Line  int    `json:"line"`
	Torn  bool   `json:"torn"`
	Error string `json:"error"`
}

// oracleShow is what "sessions show" printed before sessionview: the
// whole transcript loaded, then rendered.
func oracleShow(out io.Writer, path string, prices pricing.Table, asJSON, full, color bool) error {
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
			out2.Details = append(out2.Details, skippedJSON{sk.Line, sk.Torn, sk.Err})
		}
		return writeJSON(out, out2)
	}
	r := &renderer{w: out, st: style{on: color}, full: full}
	r.session(s)
	fmt.Fprintln(r.w)
	fmt.Fprintln(r.w, r.st.bold("totals"))
	r.field("taint", describeTaint(s))
	r.field("usage", fmt.Sprintf("%s input · %s output · %s cache read · %s cache write tokens over %s %s",
		count(usage.InputTokens), count(usage.OutputTokens), count(usage.CacheReadTokens), count(usage.CacheWriteTokens),
		count(turns), plural(turns, "turn", "turns")))
	if priced {
		r.field("cost", dollars(cost)+" at today's configured prices")
	} else {
		r.field("cost", "— (no price configured for this model in config.toml)")
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
		r.field("skipped", fmt.Sprintf("%d %s: %s", s.Skipped, plural(s.Skipped, "line", "lines"), strings.Join(parts, ", ")))
	}
	return nil
}

func describeTaint(s *session.Session) string {
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
	st   style
	full bool
}

func (r *renderer) field(name, value string) {
	fmt.Fprintf(r.w, "%-10s %s\n", name, value)
}

func (r *renderer) heading(text string) {
	fmt.Fprintln(r.w)
	fmt.Fprintln(r.w, r.st.bold("── "+text))
}

func (r *renderer) session(s *session.Session) {
	m := s.Meta
	r.field("session", r.st.bold(m.ID))
	r.field("title", oneLine(m.Title))
	r.field("created", m.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	r.field("model", m.Provider+"/"+m.Model)
	r.field("workspace", m.Workspace)
	if m.ReplayOf != "" {
		r.field("replays", m.ReplayOf)
	}
	r.field("file", s.Path)

	results := map[string]transcript.Block{}
	for _, msg := range s.Messages() {
		for _, b := range msg.Content {
			if b.Type == transcript.BlockToolResult {
				results[b.ToolUseID] = b
			}
		}
	}
	called := map[string]bool{}
	var prev *transcript.Config
	attach := 0
	for _, rec := range s.Records {
		switch rec := rec.(type) {
		case *transcript.Config:
			attach++
			r.config(attach, prev, rec)
			prev = rec
		case *transcript.Message:
			r.message(rec, results, called)
		case *transcript.Taint:
			fmt.Fprintln(r.w, r.st.dim("── taint checkpoint: "+taintWords(*rec)))
		case *transcript.Summary:
			line := fmt.Sprintf("── run finished: %s %s", count(rec.Turns), plural(rec.Turns, "turn", "turns"))
			if rec.StopReason != "" {
				line += ", " + rec.StopReason
			}
			line += fmt.Sprintf(" · %s in / %s out", count(rec.Usage.InputTokens), count(rec.Usage.OutputTokens))
			if rec.Error != "" {
				line += " · error: " + oneLine(rec.Error)
			}
			fmt.Fprintln(r.w, r.st.dim(line))
		case *transcript.Compaction:
			fmt.Fprintln(r.w, r.st.dim(fmt.Sprintf("── compacted: the first %s %s of the session replaced by a summary of %s chars (%s in / %s out)",
				count(rec.Replaces), plural(rec.Replaces, "message", "messages"), count(len(rec.Summary)),
				count(rec.Usage.InputTokens), count(rec.Usage.OutputTokens))))
			if r.full {
				fmt.Fprintln(r.w, rec.Summary)
			}
		case *transcript.Unknown:
			fmt.Fprintln(r.w, r.st.dim(fmt.Sprintf("── %q record (not known to this version of mecha)", rec.Kind())))
		}
	}
}

func taintWords(t transcript.Taint) string {
	switch {
	case t.Private && t.Untrusted:
		return "private, untrusted"
	case t.Private:
		return "private"
	case t.Untrusted:
		return "untrusted"
	}
	return "clean"
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
		if len(text) == 0 {
			return
		}
		h := "user"
		if hasResults {
			h = "user (steering, sent mid-run with tool results)"
		}
		r.heading(h + r.st.dim(atSuffix(m.At)))
		fmt.Fprintln(r.w, strings.Join(text, "\n"))
		return
	}
	r.heading("assistant" + r.st.dim(atSuffix(m.At)))
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			fmt.Fprintln(r.w, b.Text)
		case transcript.BlockThinking:
			t := b.Thinking
			if !r.full {
				t, _ = bounded(oneLine(t), 1, 160)
			}
			fmt.Fprintln(r.w, r.st.dim("[thinking] "+t))
		case transcript.BlockToolUse:
			called[b.ID] = true
			fmt.Fprintf(r.w, "→ %s %s\n", r.st.bold(b.Name), textfmt.JSON(b.Input, 300))
			if res, ok := results[b.ID]; ok {
				r.result(res)
			} else {
				fmt.Fprintln(r.w, r.st.dim("  (no result recorded)"))
			}
		default:
			fmt.Fprintln(r.w, r.st.dim("["+b.Type+" block]"))
		}
	}
}

func (r *renderer) result(b transcript.Block) {
	text, note := b.Content, ""
	if !r.full {
		text, note = bounded(text, 8, 600)
	}
	bar := "  │ "
	if b.IsError {
		bar = "  " + r.st.red("✗") + " "
	}
	if text == "" {
		fmt.Fprintln(r.w, bar+r.st.dim("(empty)"))
	}
	for line := range strings.Lines(text) {
		fmt.Fprintln(r.w, bar+strings.TrimRight(line, "\n"))
	}
	if note != "" {
		fmt.Fprintln(r.w, "  "+r.st.dim(note))
	}
}

func atSuffix(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "  " + t.UTC().Format("15:04:05")
}

// configFields returns a config's fields by JSON name, without "at".
func configFields(c *transcript.Config) map[string]any {
	line, _ := transcript.Encode(c)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber() // a seed does not fit a float64
	dec.Decode(&m)
	delete(m, "at")
	delete(m, "record")
	return m
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
		fmt.Fprintf(r.w, "system prompt (%s chars):\n%s\n", count(len(*c.SystemPrompt)), *c.SystemPrompt)
	default:
		p, _ := bounded(oneLine(*c.SystemPrompt), 1, 100)
		fmt.Fprintf(r.w, "system prompt (%s chars): %s\n", count(len(*c.SystemPrompt)), p)
	}
}

func showValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "—"
	case string:
		if v == "" {
			return `""`
		}
		return v
	case []any:
		var s []string
		for _, e := range v {
			s = append(s, showValue(e))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string { return s.wrap("1", t) }
func (s style) dim(t string) string  { return s.wrap("2", t) }
func (s style) red(t string) string  { return s.wrap("31", t) }

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// count formats an integer with thousands separators.
func count[T ~int | ~uint64 | ~int64](n T) string {
	s := strconv.FormatUint(uint64(max(n, 0)), 10)
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// dollars formats a cost; costs under a dollar keep four decimals.
func dollars(usd float64) string {
	if usd != 0 && usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// bounded returns at most maxLines lines and maxBytes bytes of s, and a
// note of what was left out ("" when nothing was).
func bounded(s string, maxLines, maxBytes int) (string, string) {
	total := len(s)
	lines := strings.Split(s, "\n")
	cut := false
	if len(lines) > maxLines {
		lines, cut = lines[:maxLines], true
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxBytes {
		out, cut = out[:maxBytes], true
		// Do not leave half a character at the cut.
		for i := 0; i < 3; i++ {
			if r, size := utf8.DecodeLastRuneInString(out); r != utf8.RuneError || size != 1 {
				break
			}
			out = out[:len(out)-1]
		}
	}
	if !cut {
		return s, ""
	}
	restLines := strings.Count(s[len(out):], "\n")
	return out, fmt.Sprintf("… %s more bytes, %s more lines (--full shows all)", count(total-len(out)), count(restLines))
}
