package regresscmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/redrive/replay"
	"github.com/mecha-agent/mecha/remote"
)

// shardDoc is one shard's results as written to a remote: the suites run
// (one per model), the whole suite's pins in order (to merge the shards
// in it), and which runs of each pin failed the check.
type shardDoc struct {
	Run    string              `json:"run"`
	Shard  string              `json:"shard"`
	Pins   []string            `json:"pins"`
	Mode   string              `json:"on_divergence"`
	Suites []regressSummary    `json:"suites"`
	Failed []map[string][]bool `json:"failed_runs"`
}

// openRemote opens the remote the options name, through the harness.
func openRemote(env *cmdkit.Env, name string) (*remote.Remote, error) {
	cfg, err := env.Config()
	if err != nil {
		return nil, err
	}
	return harness.OpenRemote(attach.World(env), cfg, name)
}

// resolveShard settles --shard: as given, else from JOB_COMPLETION_INDEX
// (0-based, as a Kubernetes Indexed Job sets it) and --shards N.
func (o *RegressOptions) resolveShard() error {
	idx := o.Env.Vars.Get("JOB_COMPLETION_INDEX")
	switch {
	case o.Shards < 0:
		return cmdkit.Usagef("regress: --shards must be positive")
	case o.Shards == 0:
		return nil
	case o.Shard != "":
		return cmdkit.Usagef("regress: give --shard I/N or --shards N (with JOB_COMPLETION_INDEX), not both")
	case idx == "":
		return cmdkit.Usagef("regress: --shards N takes the shard from JOB_COMPLETION_INDEX, which is not set (pass --shard I/N)")
	}
	i, err := strconv.Atoi(idx)
	if err != nil || i < 0 || i >= o.Shards {
		return cmdkit.Usagef("regress: JOB_COMPLETION_INDEX=%q is not a shard index from 0 to %d", idx, o.Shards-1)
	}
	o.Shard = fmt.Sprintf("%d/%d", i+1, o.Shards)
	return nil
}

// remotePins reads the remote's pins (all of them: the shard is cut
// after) and pulls the sessions of the shard the store lacks.
func remotePins(ctx context.Context, opts *RegressOptions, r *remote.Remote, i, n int) (all []string, err error) {
	all = opts.IDs
	if len(all) == 0 {
		if all, err = r.Pins(ctx); err != nil {
			return nil, err
		}
		if len(all) == 0 {
			return nil, fmt.Errorf("regress: no pins on %s: pin a session with \"mecha regress pin ID --remote %s\"", r.Name, r.Name)
		}
	}
	store, err := opts.Env.Store()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, id := range shard(all, i, n) {
		if _, err := store.Resolve(id); errors.Is(err, session.ErrNotFound) {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return all, nil
	}
	ix, _, err := r.ReadIndex(ctx)
	if err != nil {
		return nil, err
	}
	out, err := r.Pull(ctx, store, ix, missing, nil)
	if err != nil {
		return nil, err
	}
	for _, o := range out {
		if o.Action != remote.Received && o.Action != remote.Unchanged {
			return nil, fmt.Errorf("regress: pulling pin %s from %s: %s %s", o.ID, r.Name, o.Action, o.Note)
		}
	}
	fmt.Fprintf(opts.Env.Err, "regress: pulled %d pinned %s from %s\n", len(out), plural(len(out), "session", "sessions"), r.Name)
	return all, nil
}

// putShard writes the shard's results to the remote.
func putShard(ctx context.Context, opts *RegressOptions, r *remote.Remote, pins []string, i, n int, sums []regressSummary) error {
	doc := shardDoc{Run: opts.Run, Shard: fmt.Sprintf("%d/%d", i, n), Pins: pins, Mode: opts.OnDivergence, Suites: sums}
	for _, s := range sums {
		f := map[string][]bool{}
		for _, p := range s.Results {
			f[p.ID] = p.failed
		}
		doc.Failed = append(doc.Failed, f)
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	if err := r.PutShard(ctx, opts.Run, i, n, data); err != nil {
		return err
	}
	fmt.Fprintf(opts.Env.Err, "regress: shard %d/%d of run %s written to %s\n", i, n, opts.Run, r.Name)
	return nil
}

// PinOptions are the options of "regress pin".
type PinOptions struct {
	Env    *cmdkit.Env
	ID     string
	Remote string
}

// NewCmdPin builds "mecha regress pin".
func NewCmdPin(env *cmdkit.Env, runF func(context.Context, *PinOptions) error) *cobra.Command {
	opts := &PinOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "pin ID --remote NAME",
		Short: "Pin a session in a remote's regression suite, pushing it",
		Long: `Push a session to a remote and add it to the remote's pins (the pins.json
object every machine's "mecha regress --remote NAME" reads). Pin a session
that replays clean: "mecha replay ID --on-divergence=error" first. A
session already pinned is left pinned once.`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return pinRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Remote, "remote", "", "the remote `NAME` ([remotes.NAME] in config.toml)")
	return cmd
}

func pinRun(ctx context.Context, opts *PinOptions) error {
	store, err := opts.Env.Store()
	if err != nil {
		return err
	}
	ref, err := store.Resolve(opts.ID)
	if err != nil {
		return err
	}
	if !store.Holds(ref) {
		return fmt.Errorf("regress pin: %s is not in the session store %s", ref.Path(), store.Dir)
	}
	r, err := openRemote(opts.Env, opts.Remote)
	if err != nil {
		return err
	}
	out, err := r.Push(ctx, []session.Ref{ref}, nil)
	if err != nil {
		return err
	}
	if o := out[0]; o.Action == remote.Conflict || o.Action == remote.Incomplete {
		return fmt.Errorf("regress pin: %s not pinned: %s on %s %s", ref.ID, o.Action, r.Name, o.Note)
	}
	added, err := r.AddPin(ctx, ref.ID)
	if err != nil {
		return err
	}
	if added {
		fmt.Fprintf(opts.Env.Out, "pinned %s on %s\n", ref.ID, r.Name)
	} else {
		fmt.Fprintf(opts.Env.Out, "%s was pinned on %s already\n", ref.ID, r.Name)
	}
	return nil
}

// ReportOptions are the options of "regress report".
type ReportOptions struct {
	Env    *cmdkit.Env
	Remote string
	Run    string
	JUnit  string
	JSON   bool
}

// NewCmdReport builds "mecha regress report".
func NewCmdReport(env *cmdkit.Env, runF func(context.Context, *ReportOptions) error) *cobra.Command {
	opts := &ReportOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "report --remote NAME --run RUNID [--junit FILE] [--json]",
		Short: "Merge the shards of a remote regression run into one table and one JUnit file",
		Long: `Read every shard that "mecha regress --remote NAME --run RUNID --shard I/N"
wrote and merge them into the one suite they split: the table "mecha
regress" prints (the pins in the suite's order), --junit FILE one JUnit
report, --json the suite's JSON. It fails (exit 1) when a pin did not
replay clean, and when a shard of the N is missing (naming it).`,
		Args: cmdkit.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !remote.ValidRun(opts.Run) {
				return cmdkit.Usagef("regress report: --run must be a run id (letters, digits, '.', '_', '-')")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return reportRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Remote, "remote", "", "the remote `NAME` ([remotes.NAME] in config.toml)")
	f.StringVar(&opts.Run, "run", "", "the run `RUNID` the shards were written under")
	f.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	f.BoolVar(&opts.JSON, "json", false, "print the merged results as JSON")
	return cmd
}

func reportRun(ctx context.Context, opts *ReportOptions) error {
	r, err := openRemote(opts.Env, opts.Remote)
	if err != nil {
		return err
	}
	shards, err := r.Shards(ctx, opts.Run)
	if err != nil {
		return err
	}
	sums, err := mergeShards(opts.Run, r.Name, shards)
	if err != nil {
		return err
	}
	ropts := &RegressOptions{Env: opts.Env, JUnit: opts.JUnit, JSON: opts.JSON}
	for _, s := range sums {
		if s.Model != "" {
			ropts.Models = append(ropts.Models, s.Model)
		}
	}
	if len(ropts.Models) < 2 {
		ropts.Models = nil
	}
	if err := writeReports(ropts, sums); err != nil {
		return err
	}
	return verdict(sums)
}

// mergeShards merges the shards of one run into its suites, one per
// model, the pins in the suite's order.
func mergeShards(run, name string, shards []remote.Shard) ([]regressSummary, error) {
	if len(shards) == 0 {
		return nil, fmt.Errorf("regress report: run %s has no shards on %s", run, name)
	}
	n := shards[0].N
	docs := map[int]*shardDoc{}
	for _, s := range shards {
		if s.N != n {
			return nil, fmt.Errorf("regress report: run %s mixes shards of %d and of %d", run, n, s.N)
		}
		d := &shardDoc{}
		if err := json.Unmarshal(s.Data, d); err != nil {
			return nil, fmt.Errorf("regress report: shard %d/%d of run %s cannot be read: %v", s.I, s.N, run, err)
		}
		docs[s.I] = d
	}
	var missing []string
	for i := 1; i <= n; i++ {
		if docs[i] == nil {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("regress report: run %s lacks shard %v on %s: run it, then report", run, missing, name)
	}
	first := docs[1]
	mode, _ := replay.ParseMode(first.Mode)
	var sums []regressSummary
	for m := range first.Suites {
		base := first.Suites[m]
		sum := regressSummary{Model: base.Model, Provider: base.Provider, Repeat: base.Repeat, Results: []pinResult{},
			Divergences: map[string]int{}, CostUSD: new(float64)}
		byID := map[string]pinResult{}
		for i := 1; i <= n; i++ {
			d := docs[i]
			if m >= len(d.Suites) {
				return nil, fmt.Errorf("regress report: shard %d/%d of run %s ran other models than shard 1", i, n, run)
			}
			sum.Seconds = max(sum.Seconds, d.Suites[m].Seconds)
			for _, p := range d.Suites[m].Results {
				if m < len(d.Failed) {
					p.failed = d.Failed[m][p.ID]
				}
				if p.failed == nil {
					for _, rep := range p.Reports {
						p.failed = append(p.failed, fails(mode, rep))
					}
				}
				byID[p.ID] = p
			}
		}
		for _, id := range first.Pins {
			if p, ok := byID[id]; ok {
				sum.add(p)
				delete(byID, id)
			}
		}
		for _, p := range byID { // pins a shard ran by id, not in the list
			sum.add(p)
		}
		sum.Pins = len(sum.Results)
		sum.rates()
		sums = append(sums, sum)
	}
	return sums, nil
}
