package replaycmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/redrive/replay"
)

// ReplayOptions are the options of "mecha replay".
type ReplayOptions struct {
	Env *cmdkit.Env
	ID  string
	// Attach are the flags replay shares with run (Settings.Attach).
	Attach       harness.Settings
	OnDivergence string
	JSON         bool
	Repeat       int
	NoSession    bool
	HTML         string
	Deep         bool
}

// NewCmdReplay builds "mecha replay".
func NewCmdReplay(env *cmdkit.Env, runF func(context.Context, *ReplayOptions) error) *cobra.Command {
	opts := &ReplayOptions{Env: env, Attach: harness.DefaultSettings()}
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
turns recorded on another provider.

The report opens with what changed between each recorded attach's request
and the replay's, field by field: the system prompt (a unified diff), the
tools offered (added, removed) and each one's spec (a diff of description
and schema: the model is offered today's), the model, the provider, the
sampling settings, thinking and the limits. A divergence after a change
names the changes that may explain it, those about its tools first.
--json has them as "request_changes" ({"field", "recorded", "now"}, and
"diff"), with a hash of each part of each request ("request_fingerprints")
and each divergence's "after". --system-prompt-file FILE replays every
attach under that text instead of the recorded prompt: a prompt tried
against the recording.
A replay is recorded as a session of its own that names the one it
replays (replay_of). Against a sampling server one divergent replay is a
sample, not a regression: --repeat N replays N times and counts. A
recorded result given back brings the recording's taint at that call with
it (the checkpoint covering it; none: private and untrusted), so a live
replay's interlock judges the calls it runs as the recorded run's would
have, and the replay's own checkpoints are as armed as what it replayed.

A replay refuses, naming the reason, a session with no config record or
one that used a tool this build (or today's MCP servers) no longer offers.
A session the person steered mid-run (text sent beside tool results)
replays with a note that the comparison is approximate: steering cannot be
re-injected at the same point. --html FILE writes the report as a page
like "sessions view" (mode 0600): turn by turn, the recorded calls and the
replayed ones side by side as they were compared, each divergence marked
with its kind, an argument difference as a diff of the two inputs, and the
recorded calls a stopped replay never reached; --json carries the same two
sequences (recorded, replayed).

--deep also replays the child sessions of the session (the runs its
"agent" calls started, found by the parent their headers name), and
theirs, each against its own recording, and reports each under the call
that started it; in error mode a child's divergence fails the replay too.`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return replayRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	attach.ReplayModelFlags(cmd, &opts.Attach)
	attach.ReplayPromptFlag(cmd, &opts.Attach)
	attach.PermissionFlags(cmd, &opts.Attach.Yes, &opts.Attach.ReadOnly)
	f.StringVar(&opts.OnDivergence, "on-divergence", "stop", "stop, error or live")
	f.BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	f.IntVar(&opts.Repeat, "repeat", 1, "replay `N` times and count how many diverged")
	f.BoolVar(&opts.NoSession, "no-session", false, "do not record the replay as a session")
	f.StringVarP(&opts.Attach.Workspace, "workspace", "w", "", "in live mode, the workspace real calls run in (default: the recorded one)")
	f.BoolVar(&opts.Deep, "deep", false, "also replay the child sessions of subagent calls, and report them under their calls")
	f.StringVar(&opts.HTML, "html", "", "also write the report as a self-contained HTML page to `FILE`: both call sequences side by side, divergences marked")
	attach.RequestTimeoutFlag(cmd, &opts.Attach.RequestTimeout)
	attach.MCPFlags(cmd, &opts.Attach.MCP)
	return cmd
}

// validate checks the flags before anything is read.
func (o *ReplayOptions) validate() error {
	if _, err := replay.ParseMode(o.OnDivergence); err != nil {
		return cmdkit.Usagef("--on-divergence must be stop, error or live, not %q", o.OnDivergence)
	}
	if o.Repeat < 1 {
		return cmdkit.Usagef("--repeat must be at least 1")
	}
	if o.Deep && o.Repeat > 1 {
		return cmdkit.Usagef("--deep replays once; it cannot go with --repeat")
	}
	return attach.Usage(o.Attach.Validate())
}

func replayRun(ctx context.Context, opts *ReplayOptions) error {
	mode, _ := replay.ParseMode(opts.OnDivergence)
	s, ref, err := opts.Env.LoadSession(opts.ID)
	if err != nil {
		return err
	}
	set := Settings{Attach: opts.Attach, Mode: mode, Record: !opts.NoSession}
	d, err := Open(ctx, opts.Env, s, set)
	if err != nil {
		return err
	}
	defer d.Close()
	var reports []*replay.Report
	for i := 0; i < opts.Repeat; i++ {
		rep, err := d.Replay(ctx, opts.Env.Err)
		if rep != nil && rep.Status == replay.StatusRefused {
			if opts.JSON {
				cmdkit.WriteJSON(opts.Env.Out, rep)
			}
			if opts.HTML != "" {
				if werr := writeHTMLFile(opts.HTML, []*replay.Report{rep}); werr != nil {
					fmt.Fprintf(opts.Env.Err, "mecha: %v\n", werr)
				}
			}
			return err
		}
		if err == nil && opts.Deep {
			err = replayChildren(ctx, opts.Env, set, s, ref, rep, 0)
		}
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return &cmdkit.InterruptedError{Msg: "interrupted"}
			}
			return err
		}
		reports = append(reports, rep)
	}
	if opts.HTML != "" {
		if err := writeHTMLFile(opts.HTML, reports); err != nil {
			return err
		}
	}
	if opts.JSON {
		if opts.Repeat == 1 {
			err = cmdkit.WriteJSON(opts.Env.Out, reports[0])
		} else {
			err = cmdkit.WriteJSON(opts.Env.Out, summarizeRepeats(reports))
		}
		if err != nil {
			return err
		}
	} else {
		st := cmdkit.NewStyle(opts.Env)
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
		if r.Diverged() {
			diverged++
		}
	}
	if diverged == 0 {
		return nil
	}
	return &cmdkit.DivergedError{Msg: fmt.Sprintf("%d of %d %s diverged (--on-divergence=error)", diverged, len(reports), textfmt.Plural(len(reports), "replay", "replays"))}
}

// printReport writes the report for a person.
func printReport(w io.Writer, st textfmt.Style, r *replay.Report) {
	fmt.Fprintf(w, "replay of %s on %s (--on-divergence=%s)\n", r.Session, replayedOn(r.Provider, r.Model, r.Attaches), r.Mode)
	printChanges(w, r.RequestChanges)
	printAttaches(w, r.Attaches)
	if r.Steered {
		fmt.Fprintln(w, "note: the recording was steered mid-run; steering cannot be re-injected, so the comparison is approximate")
	}
	printNotes(w, r.Notes)
	if len(r.Divergences) == 0 {
		fmt.Fprintf(w, "%s: the replay made the %d recorded %s, in order, with the same arguments\n",
			st.Bold("clean"), r.CallsExpected, textfmt.Plural(r.CallsExpected, "call", "calls"))
	} else {
		fmt.Fprintf(w, "%s: %d of %d recorded %s answered from the recording", st.Red("diverged"), r.CallsReplayed, r.CallsExpected, textfmt.Plural(r.CallsExpected, "call", "calls"))
		if r.CallsRun > 0 {
			fmt.Fprintf(w, ", %d run for real", r.CallsRun)
		}
		fmt.Fprintln(w)
		for _, d := range r.Divergences {
			PrintDivergence(w, d)
		}
	}
	if r.Replay != "" {
		fmt.Fprintf(w, "recorded as session %s\n", r.Replay)
	}
	printChildren(w, st, r.Children)
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
		fmt.Fprintf(w, "  attach %d, %s: %s", a.Attach, turns, textfmt.VisibleLine(a.Provider+"/"+a.Model))
		if a.Provider != a.RecordedProvider || a.Model != a.RecordedModel {
			fmt.Fprintf(w, " (recorded on %s)", textfmt.VisibleLine(a.RecordedProvider+"/"+a.RecordedModel))
		}
		fmt.Fprintln(w)
	}
}

// printNotes writes the report's notes, one line each.
func printNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", textfmt.VisibleLine(n))
	}
}

// PrintDivergence writes one divergence for a person.
func PrintDivergence(w io.Writer, d replay.Divergence) {
	where := fmt.Sprintf("  turn %d, call #%d: ", d.Turn, d.Index)
	// Names and arguments come from the recording and from the model:
	// shown through textfmt.Visible.
	call := func(c *replay.CallRef) string { return textfmt.VisibleLine(c.Name + " " + textfmt.JSON(c.Input, 300)) }
	switch d.Kind {
	case replay.KindTool:
		fmt.Fprintf(w, "%stool: expected %s, got %s\n", where, call(d.Expected), call(d.Actual))
	case replay.KindArguments:
		fmt.Fprintf(w, "%sarguments (not structural) of %s:\n", where, textfmt.VisibleLine(d.Expected.Name))
		for _, line := range replay.ArgDiff(d.Expected.Input, d.Actual.Input) {
			fmt.Fprintf(w, "      %s\n", textfmt.Visible(line))
		}
	case replay.KindExtra:
		fmt.Fprintf(w, "%sextra: the replay went on to call %s\n", where, call(d.Actual))
	case replay.KindMissing:
		fmt.Fprintf(w, "%smissing: the replay stopped before %s\n", where, call(d.Expected))
	}
	if a := afterLine(d.After); a != "" {
		fmt.Fprintf(w, "      %s\n", a)
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
	// RequestChanges and ToolSpecChanges are the same for every repeat:
	// the requests do not move.
	RequestChanges  []replay.RequestChange `json:"request_changes"`
	ToolSpecChanges []replay.SpecChange    `json:"tool_spec_changes"`
	Notes           []string               `json:"notes"`
	Repeats         int                    `json:"repeats"`
	Diverged        int                    `json:"diverged"`
	Where           []divergenceAt         `json:"where"`
	Reports         []*replay.Report       `json:"reports"`
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
		Mode: first.Mode, Steered: first.Steered, RequestChanges: first.RequestChanges, ToolSpecChanges: first.ToolSpecChanges, Notes: first.Notes,
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

func printRepeats(w io.Writer, st textfmt.Style, s repeatSummary) {
	fmt.Fprintf(w, "replay of %s on %s, %d times (--on-divergence=%s)\n", s.Session, replayedOn(s.Provider, s.Model, s.Attaches), s.Repeats, s.Mode)
	printChanges(w, s.RequestChanges)
	printAttaches(w, s.Attaches)
	if s.Steered {
		fmt.Fprintln(w, "note: the recording was steered mid-run; steering cannot be re-injected, so the comparison is approximate")
	}
	printNotes(w, s.Notes)
	word := st.Bold("clean")
	if s.Diverged > 0 {
		word = st.Red("diverged")
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
