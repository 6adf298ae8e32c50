package sessions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/internal/textfmt"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/pricing"
	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/transcript"
)

// ShowOptions are the options of "sessions show".
type ShowOptions struct {
	Env  *cmdutil.Env
	ID   string
	JSON bool
	Full bool
}

// NewCmdShow builds "mecha sessions show".
func NewCmdShow(env *cmdutil.Env, runF func(*ShowOptions) error) *cobra.Command {
	opts := &ShowOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show a session for a person: configuration, turns, tool calls, taint, usage and cost",
		Long: `Show a session: the run configuration of each attach (and what changed between
them), each user turn, each tool call with its arguments and the start of its
result, the assistant's text, the taint state, token usage and its cost at
today's configured prices.`,
		Args: cmdutil.ExactArgs(1, "one session id"),
		RunE: func(_ *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(opts)
			}
			return showRun(opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the session as JSON: every record, plus taint, usage and cost")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "show tool results, thinking and the system prompt whole")
	return cmd
}

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

func showRun(opts *ShowOptions) error {
	path, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	s, err := session.Load(path)
	if err != nil {
		return err
	}
	usage, turns := s.UsageTotals()
	cost, priced := sessionCost(cfg.Prices, s)
	if opts.JSON {
		out := showJSON{ID: s.Meta.ID, Path: s.Path, Meta: s.Meta, Records: []json.RawMessage{}, Taint: s.Taint(),
			Usage: usage, Turns: turns, Skipped: s.Skipped}
		for _, r := range s.Records {
			line, err := transcript.Encode(r)
			if err != nil {
				return err
			}
			out.Records = append(out.Records, json.RawMessage(line))
		}
		if priced {
			out.CostUSD = &cost
		}
		for _, sk := range s.SkippedLines {
			out.Details = append(out.Details, skippedJSON{sk.Line, sk.Torn, sk.Err})
		}
		return cmdutil.WriteJSON(opts.Env.Out, out)
	}
	r := &renderer{w: opts.Env.Out, st: cmdutil.NewStyle(opts.Env), full: opts.Full}
	r.session(s)
	fmt.Fprintln(r.w)
	fmt.Fprintln(r.w, r.st.Bold("totals"))
	r.field("taint", describeTaint(s))
	r.field("usage", fmt.Sprintf("%s input · %s output · %s cache read · %s cache write tokens over %s %s",
		cmdutil.Count(usage.InputTokens), cmdutil.Count(usage.OutputTokens), cmdutil.Count(usage.CacheReadTokens), cmdutil.Count(usage.CacheWriteTokens),
		cmdutil.Count(turns), cmdutil.Plural(turns, "turn", "turns")))
	if priced {
		r.field("cost", cmdutil.Dollars(cost)+" at today's configured prices")
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
		r.field("skipped", fmt.Sprintf("%d %s: %s", s.Skipped, cmdutil.Plural(s.Skipped, "line", "lines"), strings.Join(parts, ", ")))
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
	st   cmdutil.Style
	full bool
}

func (r *renderer) field(name, value string) {
	fmt.Fprintf(r.w, "%-10s %s\n", name, value)
}

func (r *renderer) heading(text string) {
	fmt.Fprintln(r.w)
	fmt.Fprintln(r.w, r.st.Bold("── "+text))
}

func (r *renderer) session(s *session.Session) {
	m := s.Meta
	r.field("session", r.st.Bold(m.ID))
	r.field("title", textfmt.OneLine(m.Title))
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
			fmt.Fprintln(r.w, r.st.Dim("── taint checkpoint: "+taintWords(*rec)))
		case *transcript.Summary:
			line := fmt.Sprintf("── run finished: %s %s", cmdutil.Count(rec.Turns), cmdutil.Plural(rec.Turns, "turn", "turns"))
			if rec.StopReason != "" {
				line += ", " + rec.StopReason
			}
			line += fmt.Sprintf(" · %s in / %s out", cmdutil.Count(rec.Usage.InputTokens), cmdutil.Count(rec.Usage.OutputTokens))
			if rec.Error != "" {
				line += " · error: " + textfmt.OneLine(rec.Error)
			}
			fmt.Fprintln(r.w, r.st.Dim(line))
		case *transcript.Compaction:
			fmt.Fprintln(r.w, r.st.Dim(fmt.Sprintf("── compacted: the first %s %s of the session replaced by a summary of %s chars (%s in / %s out)",
				cmdutil.Count(rec.Replaces), cmdutil.Plural(rec.Replaces, "message", "messages"), cmdutil.Count(len(rec.Summary)),
				cmdutil.Count(rec.Usage.InputTokens), cmdutil.Count(rec.Usage.OutputTokens))))
			if r.full {
				fmt.Fprintln(r.w, rec.Summary)
			}
		case *transcript.Unknown:
			fmt.Fprintln(r.w, r.st.Dim(fmt.Sprintf("── %q record (not known to this version of mecha)", rec.Kind())))
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
		r.heading(h + r.st.Dim(atSuffix(m.At)))
		fmt.Fprintln(r.w, strings.Join(text, "\n"))
		return
	}
	r.heading("assistant" + r.st.Dim(atSuffix(m.At)))
	for _, b := range m.Content {
		switch b.Type {
		case transcript.BlockText:
			fmt.Fprintln(r.w, b.Text)
		case transcript.BlockThinking:
			t := b.Thinking
			if !r.full {
				t, _ = cmdutil.Bounded(textfmt.OneLine(t), 1, 160)
			}
			fmt.Fprintln(r.w, r.st.Dim("[thinking] "+t))
		case transcript.BlockToolUse:
			called[b.ID] = true
			fmt.Fprintf(r.w, "→ %s %s\n", r.st.Bold(b.Name), textfmt.JSON(b.Input, 300))
			if res, ok := results[b.ID]; ok {
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
		text, note = cmdutil.Bounded(text, 8, 600)
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
		fmt.Fprintln(r.w, "  "+r.st.Dim(note))
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
				if a[k] != nil { // specs recorded for the first time are no change
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
		fmt.Fprintf(r.w, "system prompt (%s chars):\n%s\n", cmdutil.Count(len(*c.SystemPrompt)), *c.SystemPrompt)
	default:
		p, _ := cmdutil.Bounded(textfmt.OneLine(*c.SystemPrompt), 1, 100)
		fmt.Fprintf(r.w, "system prompt (%s chars): %s\n", cmdutil.Count(len(*c.SystemPrompt)), p)
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
