// Package rerun is "mecha rerun": redo a session's tool calls with no model
// and compare each result with the recorded one.
package reruncmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/redrive/toolreplay"
)

// Options are the options of "mecha rerun".
type Options struct {
	Env           *cmdkit.Env
	ID            string
	Diff, JSON    bool
	Ignore        []string
	Yes, ReadOnly bool
	Trifecta      string
	Workspace     string
	NoSession     bool
	Sandbox       harness.Sandbox

	ignore []*regexp.Regexp
}

// NewCmdRerun builds "mecha rerun".
func NewCmdRerun(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:   "rerun ID",
		Short: "Redo a session's tool calls with no model and compare the results",
		Long: `Redo the session's tool calls in the order they ran, with their recorded
arguments, against today's tools and no model, and compare each new result
with the recorded one:

  same          the same result
  changed       another result (--diff shows a unified diff of each)
  now fails     it succeeded in the recording and fails now
  now succeeds  it failed in the recording and succeeds now
  skipped       not run: "denied in the recording" or "refused by the
                interlock in the recording" (it never ran, so it is never
                redone, and it is no gap in the record), its arguments are
                lost, or the permission mode or the trifecta interlock
                refuses it now (with the refusal's reason)
  unrecorded    run, but the recording has no result to compare with

Model replay ("mecha replay") holds the tool results fixed and lets the
model vary; rerun holds the calls fixed and lets the world vary: a changed
file, a changed tool. Results that embed volatile values (timestamps,
durations, temporary paths) differ honestly; --ignore REGEX (repeatable)
masks the matches in both results before they are compared.

Permissions as in a run: calls that modify the workspace or run commands
ask, --yes allows them, --read-only skips them. -w DIR reruns in another
directory (typically a fresh copy of the inputs: a rerun starts from
whatever the workspace holds); the default is the recorded workspace.

The trifecta interlock holds as in a run (--trifecta): before each call the
rerun's conversation takes on the taint the recording had at that call (its
taint checkpoints), besides what the calls it redoes bring in, so a call
that could send data out of a conversation holding private data and
untrusted content is skipped, with the interlock's reason, even when the
recording ran it (with --trifecta off).

MCP calls go to the servers the session recorded, started exactly as its
script would start them (a line on stderr names each), never to configured
servers of the same name, and the rerun's config record names them. Their
tools declare every capability, so --read-only skips MCP calls and --yes
runs them, and one such call makes the conversation private and untrusted:
the interlock then refuses the MCP calls of later messages, as in a run
(--trifecta off redoes them). A call of the agent tool is left out: a
rerun runs no model.

A rerun is recorded as a session of its own, whose header names the session
it reruns (rerun_of), with one tool_call record per call it ran; it can be
listed, shown, scripted and rerun in turn. --no-session records nothing.

Exit status: 0 when every result is the same (skipped calls aside), 1 when
any differs, 2 on bad usage.`,
		Args: cmdkit.ExactArgs(1, "one session id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.ID = args[0]
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return rerunRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&opts.Diff, "diff", false, "show a unified diff of each result that differs")
	f.BoolVar(&opts.JSON, "json", false, `print {"session","calls","same","changed","results":[{"index","name","status","diff"}]}`)
	attach.SandboxFlags(cmd, &opts.Sandbox)
	f.StringArrayVar(&opts.Ignore, "ignore", nil, "mask matches of `REGEX` before comparing (repeatable)")
	attach.PermissionFlags(cmd, &opts.Yes, &opts.ReadOnly)
	attach.TrifectaFlag(cmd, &opts.Trifecta)
	f.StringVarP(&opts.Workspace, "workspace", "w", "", "rerun in this directory (default: the recorded workspace)")
	f.BoolVar(&opts.NoSession, "no-session", false, "do not record the rerun as a session")
	return cmd
}

func (o *Options) validate() error {
	if err := attach.Usage(o.surface("", nil).Validate()); err != nil {
		return err
	}
	o.ignore = o.ignore[:0]
	for _, expr := range o.Ignore {
		re, err := regexp.Compile(expr)
		if err != nil {
			return cmdkit.Usagef("--ignore %q: %v", expr, err)
		}
		o.ignore = append(o.ignore, re)
	}
	return nil
}

// surface is the surface a rerun redoes the calls on: a run's, in ws,
// with the MCP servers the session recorded and no configured one.
func (o *Options) surface(ws string, recorded []mcpclient.ServerConfig) harness.SurfaceSpec {
	return harness.SurfaceSpec{Workspace: ws, Yes: o.Yes, ReadOnly: o.ReadOnly, Trifecta: o.Trifecta, Sandbox: o.Sandbox,
		MCP: harness.MCP{Off: true}, Servers: recorded}
}

func rerunRun(ctx context.Context, opts *Options) error {
	ref, err := opts.Env.ResolveSession(opts.ID)
	if err != nil {
		return err
	}
	calls, err := toolreplay.Extract(ref.Path())
	if err != nil {
		return err
	}
	ws, err := rerunWorkspace(opts.Workspace, calls.Meta.Workspace)
	if err != nil {
		return err
	}
	spec := opts.surface(ws, recordedServers(opts.Env, calls))
	spec.RecordedTrust = recordedTrust(opts.Env, ref, ws)
	surf, err := harness.OpenSurface(ctx, attach.World(opts.Env), spec)
	if err != nil {
		return err
	}
	defer surf.Close()
	rc := surf.Config()
	rc.Provider = Provider
	if calls.Lossy() {
		fmt.Fprintf(opts.Env.Err, "note: %s (%d %s); the rerun redoes what can be recovered\n",
			calls.Why(), len(calls.Gaps), textfmt.Plural(len(calls.Gaps), "gap", "gaps"))
	}
	var rec *recorder
	if !opts.NoSession {
		rec = &recorder{env: opts.Env, of: calls.Meta, rc: rc}
		defer rec.close()
	}
	rep, err := toolreplay.Rerun(ctx, calls, toolreplay.RerunOptions{Tools: surf.Registry(), Tracker: surf.Tracker(), Ignore: opts.ignore, Now: opts.Env.Clock.Now,
		Done: func(c toolreplay.Call, r toolreplay.Result) error {
			if rec == nil {
				return nil
			}
			return rec.record(r)
		}})
	if rec != nil {
		if cerr := rec.close(); cerr != nil && err == nil {
			err = cerr
		}
		rep.Rerun = rec.id()
	}
	if errors.Is(err, context.Canceled) {
		return &cmdkit.InterruptedError{Msg: "interrupted; the calls rerun so far are recorded"}
	}
	if err != nil {
		return err
	}
	if err := report(opts, rep, ws); err != nil {
		return err
	}
	if rep.Changed > 0 {
		return &cmdkit.DivergedError{Msg: fmt.Sprintf("%d of %d %s differ from the recording", rep.Changed, rep.Calls, textfmt.Plural(rep.Calls, "call", "calls"))}
	}
	return nil
}

// rerunWorkspace is where the calls run: -w, else the recorded workspace.
func rerunWorkspace(given, recorded string) (string, error) {
	ws := given
	if ws == "" {
		ws = recorded
	}
	ws, err := workdir.Dir(ws)
	if err != nil && given == "" {
		return "", fmt.Errorf("the recorded workspace is gone (give one with -w): %w", err)
	}
	return ws, err
}

// report prints the rerun's report, as JSON with --json.
func report(opts *Options, rep *toolreplay.Report, ws string) error {
	if opts.JSON {
		return cmdkit.WriteJSON(opts.Env.Out, rep)
	}
	return printReport(opts.Env.Out, cmdkit.NewStyle(opts.Env), rep, ws, opts.Diff)
}

// recordedServers are the MCP servers the session's calls used, as the
// session recorded them (command and args, or URL): the same servers a
// generated script starts, never the configured ones, so that a rerun and
// the script redo the same thing. A server recorded twice under one name
// but reached differently (a resume changed it) starts as first recorded,
// with a note.
func recordedServers(env *cmdkit.Env, calls *toolreplay.Calls) []mcpclient.ServerConfig {
	var recorded []transcript.MCPServer
	for _, s := range calls.Servers() {
		if i := slices.IndexFunc(recorded, func(r transcript.MCPServer) bool { return r.Name == s.Name }); i >= 0 {
			fmt.Fprintf(env.Err, "note: MCP server %q was recorded as %s and as %s; the rerun starts the first\n",
				s.Name, toolreplay.ServerText(recorded[i]), toolreplay.ServerText(s))
			continue
		}
		recorded = append(recorded, s)
	}
	configs := make([]mcpclient.ServerConfig, len(recorded))
	for i, s := range recorded {
		configs[i] = toolreplay.ServerConfig(s)
		fmt.Fprintf(env.Err, "mcp: starting server %q as recorded: %s\n", s.Name, toolreplay.ServerText(s))
	}
	return configs
}

// printReport writes the report for a person: one line per call, the
// diffs when asked, a summary line.
func printReport(w io.Writer, st textfmt.Style, rep *toolreplay.Report, ws string, diffs bool) error {
	fmt.Fprintf(w, "rerun of %s in %s, no model\n", rep.Session, ws)
	for _, r := range rep.Results {
		status := r.Status
		if r.Differs() {
			status = st.Red(status)
		}
		fmt.Fprintf(w, "  call %d %s: %s", r.Index, textfmt.VisibleLine(r.Name), status)
		if r.Reason != "" {
			fmt.Fprintf(w, " (%s)", textfmt.Clip(textfmt.VisibleLine(r.Reason), 120))
		}
		fmt.Fprintln(w)
		if diffs && r.Diff != "" {
			// The diff is of tool output: shown, never sent to the terminal.
			for _, line := range strings.SplitAfter(strings.TrimSuffix(textfmt.Visible(r.Diff), "\n"), "\n") {
				fmt.Fprintf(w, "    %s", line)
			}
			fmt.Fprintln(w)
		}
	}
	head := st.Bold("same")
	if rep.Changed > 0 {
		head = st.Red("differs")
	}
	fmt.Fprintf(w, "%s: %d same, %d differ, %d skipped of %d %s\n", head, rep.Same, rep.Changed, rep.Skipped, rep.Calls, textfmt.Plural(rep.Calls, "call", "calls"))
	if rep.Rerun != "" {
		fmt.Fprintf(w, "recorded as session %s\n", rep.Rerun)
	}
	return nil
}

// recordedTrust is the narrowest workspace decision the session recorded
// for ws: untrusted when any attach in it was, nil when none says (a
// record older than the decision, or another workspace): the rerun is
// then judged by today's trusted_workspaces alone.
func recordedTrust(env *cmdkit.Env, ref session.Ref, ws string) *transcript.WorkspaceTrust {
	store, err := env.Store()
	if err != nil {
		return nil
	}
	s, err := store.Load(ref)
	if err != nil {
		return nil
	}
	var out *transcript.WorkspaceTrust
	for _, rc := range s.Configs() {
		if rc.WorkspaceTrust == nil || workdir.Canonical(rc.Workspace) != workdir.Canonical(ws) {
			continue
		}
		if out == nil || out.Trusted && !rc.WorkspaceTrust.Trusted {
			out = rc.WorkspaceTrust
		}
	}
	return out
}
