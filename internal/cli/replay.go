package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/agent"
	"github.com/mecha-agent/mecha/internal/config"
	"github.com/mecha-agent/mecha/provider"
	"github.com/mecha-agent/mecha/replay"
	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/tool"
	"github.com/mecha-agent/mecha/transcript"
)

// ReplayOptions are the options of "mecha replay".
type ReplayOptions struct {
	Env             *Env
	ID              string
	Provider, Model string
	OnDivergence    string
	JSON            bool
	Repeat          int
	NoSession       bool
	Yes, ReadOnly   bool
	Workspace       string
	MockScript      string
}

// NewCmdReplay builds "mecha replay".
func NewCmdReplay(env *Env) *cobra.Command {
	opts := &ReplayOptions{Env: env}
	cmd := &cobra.Command{
		Use:   "replay ID",
		Short: "Re-drive a recorded session against a model with the recorded tool results",
		Long: `Replay a session: every user turn is sent again under the configuration it was
recorded with, and each tool call the model makes is compared with the
recorded call at the same position and answered with the recorded result.
The model is the only live component, so a difference means the model or
the harness changed, not the filesystem or the web.

Divergences: tool (another tool at that position), arguments (the same tool
with other arguments, compared as JSON values; cosmetic, the run goes on),
extra (calls past the recording), missing (the replay stopped early).

--on-divergence decides what a structural divergence does:
  stop   end the replay there (default); nothing is executed
  error  the same, and exit 1 on any divergence, arguments included
  live   abandon the recording and go on against the real tools, under the
         recorded permission mode (or --yes / --read-only)

Each turn goes to the provider and model of the attach that recorded it (a
session resumed on another provider replays on both); -p and -m replace
them for every turn, and -p alone picks that provider's default model for
turns recorded on another provider. A tool whose description or input
schema changed since the recording is noted; the model is offered today's.
A replay is recorded as a session of its own that names the one it
replays. Against a sampling server one divergent replay is a sample, not a
regression: --repeat N replays N times and counts.`,
		Args: exactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			return replayRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Provider, "provider", "p", "", "replay against this provider (default: the recorded one)")
	f.StringVarP(&opts.Model, "model", "m", "", "replay against this model (default: the recorded one, or -p's default)")
	f.StringVar(&opts.OnDivergence, "on-divergence", "stop", "stop, error or live")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.IntVar(&opts.Repeat, "repeat", 1, "replay `N` times and count how many diverged")
	f.BoolVar(&opts.NoSession, "no-session", false, "do not record the replay as a session")
	f.BoolVar(&opts.Yes, "yes", false, "in live mode, allow every real call without asking")
	f.BoolVar(&opts.ReadOnly, "read-only", false, "in live mode, refuse every real call that modifies the workspace or runs a command")
	f.StringVarP(&opts.Workspace, "workspace", "w", "", "in live mode, the workspace real calls run in (default: the recorded one)")
	f.StringVar(&opts.MockScript, "mock-script", "", "with -p mock, play this JSON `FILE` of turns")
	return cmd
}

func replayRun(ctx context.Context, opts *ReplayOptions) error {
	mode, err := replay.ParseMode(opts.OnDivergence)
	if err != nil {
		return &usageError{err}
	}
	if opts.Repeat < 1 {
		return usagef("--repeat must be at least 1")
	}
	if opts.Yes && opts.ReadOnly {
		return usagef("--yes and --read-only contradict each other")
	}
	cfg, err := opts.Env.Config()
	if err != nil {
		return err
	}
	path, err := resolveSession(opts.Env, opts.ID)
	if err != nil {
		return err
	}
	s, err := session.Load(path)
	if err != nil {
		return err
	}
	job, err := newReplayJob(opts.Env, cfg, s, replaySettings{
		Provider: opts.Provider, Model: opts.Model, Mode: mode, Workspace: opts.Workspace,
		Yes: opts.Yes, ReadOnly: opts.ReadOnly, MockScript: opts.MockScript, Record: !opts.NoSession,
	})
	if err != nil {
		return err
	}
	defer job.cleanup()
	var reports []*replay.Report
	for i := 0; i < opts.Repeat; i++ {
		rep, err := job.run(ctx, opts.Env.Err)
		if rep != nil && rep.Status == replay.StatusRefused {
			if opts.JSON {
				writeJSON(opts.Env.Out, rep)
			}
			return err
		}
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return &exitError{code: ExitInterrupted, msg: "interrupted"}
			}
			return err
		}
		reports = append(reports, rep)
	}
	if opts.JSON {
		if opts.Repeat == 1 {
			err = writeJSON(opts.Env.Out, reports[0])
		} else {
			err = writeJSON(opts.Env.Out, summarizeRepeats(reports))
		}
		if err != nil {
			return err
		}
	} else {
		st := newStyle(opts.Env)
		if opts.Repeat == 1 {
			printReport(opts.Env.Out, st, reports[0])
		} else {
			printRepeats(opts.Env.Out, st, summarizeRepeats(reports))
		}
	}
	return replayExit(mode, reports)
}

// replayExit is the exit status of a finished replay: in error mode any
// divergence fails it.
func replayExit(mode replay.Mode, reports []*replay.Report) error {
	if mode != replay.ModeError {
		return nil
	}
	diverged := 0
	for _, r := range reports {
		if len(r.Divergences) > 0 {
			diverged++
		}
	}
	if diverged == 0 {
		return nil
	}
	return &exitError{code: ExitFailure, msg: fmt.Sprintf("%d of %d %s diverged (--on-divergence=error)", diverged, len(reports), plural(len(reports), "replay", "replays"))}
}

// replaySettings are the choices a replay is made with.
type replaySettings struct {
	Provider, Model string
	Mode            replay.Mode
	Workspace       string
	Yes, ReadOnly   bool
	MockScript      string
	Record          bool
}

// replayJob replays one session, as often as asked.
type replayJob struct {
	env      *Env
	cfg      *config.Config
	s        *session.Session
	set      replaySettings
	override replay.Override // -p and -m; each turn otherwise goes to its attach's own
	tools    replay.ToolsFunc
	tmp      string // a stand-in workspace, removed by cleanup
}

func newReplayJob(env *Env, cfg *config.Config, s *session.Session, set replaySettings) (*replayJob, error) {
	j := &replayJob{env: env, cfg: cfg, s: s, set: set}
	j.override = replay.Override{Provider: set.Provider, Model: set.Model,
		DefaultModel: func(name string) string { return defaultModel(cfg, name) }}
	perm := ""
	switch {
	case set.Yes:
		perm = string(tool.ModeYes)
	case set.ReadOnly:
		perm = string(tool.ModeReadOnly)
	}
	j.tools = func(rc transcript.Config) (*tool.Registry, *tool.Tracker, error) {
		if perm != "" {
			rc.PermissionMode = perm
		}
		ws, err := j.workspace(rc.Workspace)
		if err != nil {
			return nil, nil, err
		}
		rc.Workspace = ws
		return buildTools(env, rc, toolSetup{})
	}
	return j, nil
}

// uses reports whether any attach is replayed on the named provider.
func (j *replayJob) uses(name string) bool {
	return slices.ContainsFunc(replay.Targets(j.s, j.override), func(t replay.Target) bool { return t.Provider == name })
}

// workspace is where live calls run. In stop and error modes nothing runs,
// so a recorded workspace that is gone is replaced by an empty stand-in.
func (j *replayJob) workspace(recorded string) (string, error) {
	if j.set.Workspace != "" {
		return workspaceDir(j.set.Workspace)
	}
	if ws, err := workspaceDir(recorded); err == nil {
		return ws, nil
	} else if j.set.Mode == replay.ModeLive {
		return "", fmt.Errorf("the recorded workspace is gone (give one with -w for a live replay): %w", err)
	}
	if j.tmp == "" {
		d, err := os.MkdirTemp("", "mecha-replay-")
		if err != nil {
			return "", err
		}
		j.tmp = d
	}
	return j.tmp, nil
}

func (j *replayJob) cleanup() {
	if j.tmp != "" {
		os.RemoveAll(j.tmp)
	}
}

// run replays the session once, recording the replay unless told not to.
func (j *replayJob) run(ctx context.Context, log io.Writer) (*replay.Report, error) {
	providers := func(name, _ string) (provider.Provider, error) {
		return newProvider(j.env, name, providerSetup{MockScript: j.set.MockScript})
	}
	opts := replay.Options{
		Session: j.s, Providers: providers, Override: j.override, Mode: j.set.Mode,
		MechaVersion: Version(), Tools: j.tools, Prices: j.cfg.Prices, Now: j.env.Now, Log: log,
	}
	if j.set.Yes {
		opts.PermissionMode = string(tool.ModeYes)
	} else if j.set.ReadOnly {
		opts.PermissionMode = string(tool.ModeReadOnly)
	}
	var lw *lazyWriter
	if j.set.Record {
		dir, err := j.env.SessionDir()
		if err != nil {
			return nil, err
		}
		// The session is created with the replay's first record, so a
		// replay that is refused leaves nothing behind.
		lw = &lazyWriter{create: func(first transcript.Record) (*session.Writer, error) {
			// The first record is the first turn's config: the meta names
			// who the replay started on, as a session's names who it was
			// created with.
			var prov, model string
			if c, ok := first.(*transcript.Config); ok {
				prov, model = c.Provider, c.Model
			}
			store := &session.Store{Dir: dir, Now: j.env.Now, BackgroundSync: true}
			w, err := store.Create(transcript.Meta{Provider: prov, Model: model, Workspace: j.s.Meta.Workspace,
				Title: clip("replay of "+j.s.Meta.ID+": "+oneLine(j.s.Meta.Title), 100), ReplayOf: j.s.Meta.ID})
			if err == nil {
				fmt.Fprintf(log, "session: %s replays %s (%s/%s)\n", w.ID(), j.s.Meta.ID, prov, model)
			}
			return w, err
		}}
		opts.Recorder = lw
	}
	rep, err := replay.Replay(ctx, opts)
	if lw != nil && lw.w != nil {
		if cerr := lw.w.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if rep != nil {
			rep.Replay = lw.w.ID()
		}
	}
	return rep, err
}

// lazyWriter creates its session on the first record it is given.
type lazyWriter struct {
	create func(first transcript.Record) (*session.Writer, error)
	w      *session.Writer
}

func (l *lazyWriter) Append(recs ...transcript.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if l.w == nil {
		w, err := l.create(recs[0])
		if err != nil {
			return err
		}
		l.w = w
	}
	return l.w.Append(recs...)
}

func (l *lazyWriter) Sync() error {
	if l.w == nil {
		return nil
	}
	return l.w.Sync()
}

// printReport writes the report for a person.
func printReport(w io.Writer, st style, r *replay.Report) {
	fmt.Fprintf(w, "replay of %s on %s (--on-divergence=%s)\n", r.Session, replayedOn(r.Provider, r.Model, r.Attaches), r.Mode)
	printAttaches(w, r.Attaches)
	if r.Steered {
		fmt.Fprintln(w, "note: the recording was steered mid-run; steering cannot be re-injected, so the comparison is approximate")
	}
	printSpecChanges(w, r.ToolSpecChanges)
	if len(r.Divergences) == 0 {
		fmt.Fprintf(w, "%s: the replay made the %d recorded %s, in order, with the same arguments\n",
			st.bold("clean"), r.CallsExpected, plural(r.CallsExpected, "call", "calls"))
	} else {
		fmt.Fprintf(w, "%s: %d of %d recorded %s answered from the recording", st.red("diverged"), r.CallsReplayed, r.CallsExpected, plural(r.CallsExpected, "call", "calls"))
		if r.CallsRun > 0 {
			fmt.Fprintf(w, ", %d run for real", r.CallsRun)
		}
		fmt.Fprintln(w)
		for _, d := range r.Divergences {
			printDivergence(w, d)
		}
	}
	if r.Replay != "" {
		fmt.Fprintf(w, "recorded as session %s\n", r.Replay)
	}
}

// replayedOn names who answered a replay: one provider/model, or each
// distinct one in the order the attaches used them.
func replayedOn(prov, model string, attaches []replay.Attach) string {
	if len(attaches) == 0 {
		return prov + "/" + model
	}
	var names []string
	for _, a := range attaches {
		if n := a.Provider + "/" + a.Model; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return strings.Join(names, ", ")
}

// printAttaches says who answered each attach, when not all the same.
func printAttaches(w io.Writer, attaches []replay.Attach) {
	for _, a := range attaches {
		turns := fmt.Sprintf("turn %d", a.FirstTurn)
		if a.LastTurn != a.FirstTurn {
			turns = fmt.Sprintf("turns %d-%d", a.FirstTurn, a.LastTurn)
		}
		fmt.Fprintf(w, "  attach %d, %s: %s/%s", a.Attach, turns, a.Provider, a.Model)
		if a.Provider != a.RecordedProvider || a.Model != a.RecordedModel {
			fmt.Fprintf(w, " (recorded on %s/%s)", a.RecordedProvider, a.RecordedModel)
		}
		fmt.Fprintln(w)
	}
}

// printSpecChanges notes, one line per tool, the specs that changed since
// the recording.
func printSpecChanges(w io.Writer, changes []replay.SpecChange) {
	for _, c := range changes {
		fmt.Fprintf(w, "note: %s: %s changed since the recording; the model was offered today's\n",
			c.Tool, strings.ReplaceAll(strings.Join(c.Changed, " and "), "_", " "))
	}
}

func printDivergence(w io.Writer, d replay.Divergence) {
	where := fmt.Sprintf("  turn %d, call #%d: ", d.Turn, d.Index)
	call := func(c *replay.CallRef) string { return c.Name + " " + compactJSON(c.Input) }
	switch d.Kind {
	case replay.KindTool:
		fmt.Fprintf(w, "%stool: expected %s, got %s\n", where, call(d.Expected), call(d.Actual))
	case replay.KindArguments:
		fmt.Fprintf(w, "%sarguments (not structural) of %s:\n", where, d.Expected.Name)
		for _, line := range replay.ArgDiff(d.Expected.Input, d.Actual.Input) {
			fmt.Fprintf(w, "      %s\n", line)
		}
	case replay.KindExtra:
		fmt.Fprintf(w, "%sextra: the replay went on to call %s\n", where, call(d.Actual))
	case replay.KindMissing:
		fmt.Fprintf(w, "%smissing: the replay stopped before %s\n", where, call(d.Expected))
	}
}

// repeatSummary is the outcome of --repeat N.
type repeatSummary struct {
	Session  string          `json:"session"`
	Provider string          `json:"provider"`
	Model    string          `json:"model"`
	Attaches []replay.Attach `json:"attaches,omitempty"`
	Mode     replay.Mode     `json:"mode"`
	Steered  bool            `json:"steered"`
	// ToolSpecChanges is the same for every repeat: the specs do not move.
	ToolSpecChanges []replay.SpecChange `json:"tool_spec_changes"`
	Repeats         int                 `json:"repeats"`
	Diverged        int                 `json:"diverged"`
	Where           []divergenceAt      `json:"where"`
	Reports         []*replay.Report    `json:"reports"`
}

// divergenceAt counts the replays whose first divergence was at one place.
type divergenceAt struct {
	Kind  string `json:"kind"`
	Index int    `json:"index"`
	Count int    `json:"count"`
}

func summarizeRepeats(reports []*replay.Report) repeatSummary {
	first := reports[0]
	sum := repeatSummary{Session: first.Session, Provider: first.Provider, Model: first.Model, Attaches: first.Attaches,
		Mode: first.Mode, Steered: first.Steered, ToolSpecChanges: first.ToolSpecChanges,
		Repeats: len(reports), Reports: reports, Where: []divergenceAt{}}
	counts := map[[2]string]*divergenceAt{}
	for _, r := range reports {
		if len(r.Divergences) == 0 {
			continue
		}
		sum.Diverged++
		d := r.Divergences[0]
		k := [2]string{d.Kind, fmt.Sprint(d.Index)}
		if counts[k] == nil {
			counts[k] = &divergenceAt{Kind: d.Kind, Index: d.Index}
		}
		counts[k].Count++
	}
	for _, c := range counts {
		sum.Where = append(sum.Where, *c)
	}
	sort.Slice(sum.Where, func(i, j int) bool {
		if sum.Where[i].Count != sum.Where[j].Count {
			return sum.Where[i].Count > sum.Where[j].Count
		}
		return sum.Where[i].Index < sum.Where[j].Index
	})
	return sum
}

func printRepeats(w io.Writer, st style, s repeatSummary) {
	fmt.Fprintf(w, "replay of %s on %s, %d times (--on-divergence=%s)\n", s.Session, replayedOn(s.Provider, s.Model, s.Attaches), s.Repeats, s.Mode)
	printAttaches(w, s.Attaches)
	if s.Steered {
		fmt.Fprintln(w, "note: the recording was steered mid-run; steering cannot be re-injected, so the comparison is approximate")
	}
	printSpecChanges(w, s.ToolSpecChanges)
	word := st.bold("clean")
	if s.Diverged > 0 {
		word = st.red("diverged")
	}
	fmt.Fprintf(w, "%s: %d of %d replays diverged\n", word, s.Diverged, s.Repeats)
	for _, d := range s.Where {
		fmt.Fprintf(w, "  %d× first at call #%d (%s)\n", d.Count, d.Index, d.Kind)
	}
	if s.Diverged > 0 && s.Diverged < s.Repeats {
		fmt.Fprintln(w, "Against a sampling server a divergent replay is a sample, not a regression.")
	}
	var ids []string
	for _, r := range s.Reports {
		if r.Replay != "" {
			ids = append(ids, r.Replay)
		}
	}
	if len(ids) > 0 {
		fmt.Fprintf(w, "recorded as sessions %s\n", strings.Join(ids, ", "))
	}
}

var _ agent.Recorder = (*lazyWriter)(nil)
