package sessionscmd

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/sessionview"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// StatsOptions are the options of "sessions stats".
type StatsOptions struct {
	Env  *cmdkit.Env
	Days int
	JSON bool
}

// NewCmdStats builds "mecha sessions stats".
func NewCmdStats(env *cmdkit.Env, runF func(*StatsOptions) error) *cobra.Command {
	opts := &StatsOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Roll up sessions, turns, tokens and cost by provider and model",
		Long: `Roll up the recorded usage of sessions by provider and model. Transcripts record
tokens, not prices: every cost is computed at today's prices (mecha's
dated table, with $MECHA_HOME/config.toml's [prices] over it), so
historical runs are re-priced. A model with no price shows — rather than
a cost. A session that died before its
run finished counts as a session but contributes no tokens it did not record.`,
		Args: cmdkit.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if opts.Days < 0 {
				return cmdkit.Usagef("--days must not be negative")
			}
			if runF != nil {
				return runF(opts)
			}
			return statsRun(opts)
		},
	}
	cmd.Flags().IntVar(&opts.Days, "days", 0, "only sessions created in the last `N` days (0: all)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print a JSON array of rows")
	return cmd
}

type statsRow struct {
	Provider         string   `json:"provider"`
	Model            string   `json:"model"`
	Sessions         int      `json:"sessions"`
	Turns            int      `json:"turns"`
	InputTokens      uint64   `json:"input_tokens"`
	OutputTokens     uint64   `json:"output_tokens"`
	CacheReadTokens  uint64   `json:"cache_read_tokens"`
	CacheWriteTokens uint64   `json:"cache_write_tokens"`
	CostUSD          *float64 `json:"cost_usd"`
	// Saturated says a total reached the largest value it can hold (sums
	// stop there rather than wrap round): the true total is at least that.
	Saturated bool `json:"saturated,omitempty"`
}

func (r *statsRow) usage() transcript.Usage {
	return transcript.Usage{InputTokens: r.InputTokens, OutputTokens: r.OutputTokens,
		CacheReadTokens: r.CacheReadTokens, CacheWriteTokens: r.CacheWriteTokens}
}

func statsRun(opts *StatsOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	// Totalling allocates a little per session and keeps all of it:
	// collect less often while it runs, as listing does.
	defer opts.Env.TuneGC(800)()
	read, skipped, err := store.Summaries(createdSince(opts.Env.Clock.Now(), opts.Days))
	if err != nil {
		return err
	}
	opts.Env.NoteSkipped(skipped)
	rows, failed := rollUp(read, opts.Env.Err)
	out := priced(rows, cfg.Prices())
	if opts.JSON {
		return cmdkit.WriteJSON(opts.Env.Out, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(opts.Env.Err, "no sessions in %s%s\n", store.Dir, sinceWords(opts.Days))
		return nil
	}
	return printStats(opts, out, len(read)-failed)
}

// createdSince keeps the sessions created in the last days days (nil,
// all of them, when days is 0).
func createdSince(now time.Time, days int) func(transcript.Meta) bool {
	if days <= 0 {
		return nil
	}
	since := now.Add(-time.Duration(days) * 24 * time.Hour)
	return func(m transcript.Meta) bool { return !m.CreatedAt.Before(since) }
}

type statsKey struct{ prov, model string }

// rollUp sums the summaries of every session by provider and model; a
// session counts once in each row it has tokens in. Sessions that could not
// be read are warned about and counted in failed.
func rollUp(read []session.Summarized, warn io.Writer) (rows map[statsKey]*statsRow, failed int) {
	rows = map[statsKey]*statsRow{}
	get := func(k statsKey) *statsRow {
		if rows[k] == nil {
			rows[k] = &statsRow{Provider: k.prov, Model: k.model}
		}
		return rows[k]
	}
	for _, r := range read {
		if r.Err != nil {
			failed++
			fmt.Fprintf(warn, "warning: %s\n", textfmt.OneLine(r.Err.Error()))
			continue
		}
		seen := map[statsKey]bool{}
		if len(r.Summaries) == 0 {
			k := statsKey{r.Meta.Provider, r.Meta.Model}
			seen[k] = true
			get(k)
		}
		for _, s := range r.Summaries {
			p, m := sessionview.Attribute(r.Meta, s)
			k := statsKey{p, m}
			seen[k] = true
			row := get(k)
			row.Turns = transcript.AddTurns(row.Turns, s.Turns)
			u := row.usage().Add(s.Usage)
			row.InputTokens, row.OutputTokens, row.CacheReadTokens, row.CacheWriteTokens = u.InputTokens, u.OutputTokens, u.CacheReadTokens, u.CacheWriteTokens
			row.Saturated = u.Saturated() || row.Turns == math.MaxInt
		}
		for k := range seen {
			rows[k].Sessions++
		}
	}
	return rows, failed
}

// priced prices each row at today's table and sorts them by provider and
// model.
func priced(rows map[statsKey]*statsRow, table pricing.Table) []statsRow {
	out := make([]statsRow, 0, len(rows))
	for _, row := range rows {
		if c, ok := table.Cost(row.Provider, row.Model, row.usage()); ok {
			row.CostUSD = &c
		}
		out = append(out, *row)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Provider != out[j].Provider {
			return out[i].Provider < out[j].Provider
		}
		return out[i].Model < out[j].Model
	})
	return out
}

func printStats(opts *StatsOptions, out []statsRow, sessions int) error {
	t := &cmdkit.Table{Right: map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true}}
	t.Add("PROVIDER", "MODEL", "SESSIONS", "TURNS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST")
	var total float64
	unpriced, saturated := 0, false
	// ≥ marks a total that reached the largest value it can hold.
	sum := func(s string) string {
		if rest, ok := strings.CutPrefix(s, "at least "); ok {
			saturated = true
			return "≥" + rest
		}
		return s
	}
	for _, r := range out {
		cost := "—"
		if r.CostUSD != nil {
			cost = textfmt.Dollars(*r.CostUSD)
			total += *r.CostUSD
		} else {
			unpriced++
		}
		t.Add(textfmt.VisibleLine(r.Provider), textfmt.VisibleLine(r.Model), textfmt.Count(r.Sessions), sum(textfmt.Sum(r.Turns)), sum(textfmt.Sum(r.InputTokens)), sum(textfmt.Sum(r.OutputTokens)),
			sum(textfmt.Sum(r.CacheReadTokens)), sum(textfmt.Sum(r.CacheWriteTokens)), cost)
	}
	st := cmdkit.NewStyle(opts.Env)
	if err := t.Write(opts.Env.Out, st); err != nil {
		return err
	}
	totalWords := textfmt.Dollars(total)
	switch {
	case unpriced == len(out):
		totalWords = "— (no prices apply)"
	case unpriced > 0:
		totalWords += fmt.Sprintf(" for the priced rows (%d %s without a price)", unpriced, textfmt.Plural(unpriced, "row", "rows"))
	}
	fmt.Fprintf(opts.Env.Out, "\n%s %s%s, total cost %s.\n", textfmt.Count(sessions), textfmt.Plural(sessions, "session", "sessions"), sinceWords(opts.Days), totalWords)
	fmt.Fprintln(opts.Env.Out, st.Dim("Costs are computed at today's prices (mecha's table of "+pricing.Builtin().Date.Format("2006-01-02")+
		", then config.toml); historical runs are re-priced, not remembered."))
	if saturated {
		fmt.Fprintln(opts.Env.Out, "≥ marks a total that reached the largest number it can hold: the true total is at least that.")
	}
	return nil
}

func sinceWords(days int) string {
	if days <= 0 {
		return ""
	}
	return fmt.Sprintf(" in the last %d %s", days, textfmt.Plural(days, "day", "days"))
}
