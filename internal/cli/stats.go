package cli

import (
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/transcript"
)

// StatsOptions are the options of "sessions stats".
type StatsOptions struct {
	Env  *Env
	Days int
	JSON bool
}

// NewCmdSessionsStats builds "mecha sessions stats".
func NewCmdSessionsStats(env *Env) *cobra.Command {
	opts := &StatsOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Roll up sessions, turns, tokens and cost by provider and model",
		Long: `Roll up the recorded usage of sessions by provider and model. Transcripts record
tokens, not prices: every cost is computed at the prices configured today in
$MECHA_HOME/config.toml, so historical runs are re-priced. A model with no
configured price shows — rather than a cost. A session that died before its
run finished counts as a session but contributes no tokens it did not record.`,
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return statsRun(opts) },
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
}

func statsRun(opts *StatsOptions) error {
	if opts.Days < 0 {
		return usagef("--days must not be negative")
	}
	dir, err := opts.Env.SessionDir()
	if err != nil {
		return err
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	var keep func(transcript.Meta) bool
	if opts.Days > 0 {
		since := opts.Env.now().Add(-time.Duration(opts.Days) * 24 * time.Hour)
		keep = func(m transcript.Meta) bool { return !m.CreatedAt.Before(since) }
	}
	read, err := session.ReadDirSummaries(dir, keep)
	if err != nil {
		return err
	}
	type key struct{ prov, model string }
	rows := map[key]*statsRow{}
	get := func(k key) *statsRow {
		if rows[k] == nil {
			rows[k] = &statsRow{Provider: k.prov, Model: k.model}
		}
		return rows[k]
	}
	failed := 0
	for _, r := range read {
		if r.Err != nil {
			failed++
			fmt.Fprintf(opts.Env.Err, "warning: %s\n", oneLine(r.Err.Error()))
			continue
		}
		seen := map[key]bool{}
		if len(r.Summaries) == 0 {
			seen[key{r.Meta.Provider, r.Meta.Model}] = true
			get(key{r.Meta.Provider, r.Meta.Model})
		}
		for _, s := range r.Summaries {
			p, m := attribute(r.Meta, s)
			k := key{p, m}
			seen[k] = true
			row := get(k)
			row.Turns += s.Turns
			row.InputTokens += s.Usage.InputTokens
			row.OutputTokens += s.Usage.OutputTokens
			row.CacheReadTokens += s.Usage.CacheReadTokens
			row.CacheWriteTokens += s.Usage.CacheWriteTokens
		}
		for k := range seen {
			rows[k].Sessions++
		}
	}
	out := make([]statsRow, 0, len(rows))
	for _, row := range rows {
		u := transcript.Usage{InputTokens: row.InputTokens, OutputTokens: row.OutputTokens,
			CacheReadTokens: row.CacheReadTokens, CacheWriteTokens: row.CacheWriteTokens}
		if c, ok := cfg.Prices.Cost(row.Provider, row.Model, u); ok {
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
	if opts.JSON {
		return writeJSON(opts.Env.Out, out)
	}
	if len(out) == 0 {
		fmt.Fprintf(opts.Env.Err, "no sessions in %s%s\n", dir, sinceWords(opts.Days))
		return nil
	}
	t := &table{right: map[int]bool{2: true, 3: true, 4: true, 5: true, 6: true, 7: true, 8: true}}
	t.add("PROVIDER", "MODEL", "SESSIONS", "TURNS", "INPUT", "OUTPUT", "CACHE READ", "CACHE WRITE", "COST")
	var total float64
	var sessions int
	unpriced := 0
	for _, r := range out {
		cost := "—"
		if r.CostUSD != nil {
			cost = dollars(*r.CostUSD)
			total += *r.CostUSD
		} else {
			unpriced++
		}
		t.add(r.Provider, r.Model, count(r.Sessions), count(r.Turns), count(r.InputTokens), count(r.OutputTokens),
			count(r.CacheReadTokens), count(r.CacheWriteTokens), cost)
	}
	st := newStyle(opts.Env)
	if err := t.write(opts.Env.Out, st); err != nil {
		return err
	}
	sessions = len(read) - failed
	totalWords := dollars(total)
	switch {
	case unpriced == len(out):
		totalWords = "— (no configured prices apply)"
	case unpriced > 0:
		totalWords += fmt.Sprintf(" for the priced rows (%d %s without a configured price)", unpriced, plural(unpriced, "row", "rows"))
	}
	fmt.Fprintf(opts.Env.Out, "\n%s %s%s, total cost %s.\n", count(sessions), plural(sessions, "session", "sessions"), sinceWords(opts.Days), totalWords)
	fmt.Fprintln(opts.Env.Out, st.dim("Costs are computed at today's prices from config.toml; historical runs are re-priced, not remembered."))
	return nil
}

func sinceWords(days int) string {
	if days <= 0 {
		return ""
	}
	return fmt.Sprintf(" in the last %d %s", days, plural(days, "day", "days"))
}
