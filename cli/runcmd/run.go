package runcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Options are the options of "mecha run".
type Options struct {
	Env *cmdkit.Env
	// Task is what the model is asked: the argument, the -f file or stdin,
	// with stdin appended as context when it came beside one of the others.
	Task string
	// TaskFile is -f: the task's file ("-" for stdin).
	TaskFile string
	// titleText is what the default title is taken from: the task without
	// the stdin appended to it.
	titleText string
	// Given reports whether a flag was given on the command line, to tell
	// a flag given from its default (what a resumed session inherits).
	Given func(name string) bool
	// Settings are the flags that shape the attach, declared once in
	// cli/attach and shared with chat.
	harness.Settings

	Resume string
	// Continue is -c: resume the newest session of this workspace that a
	// person ran (cmdkit.ContinueID).
	Continue  bool
	NoSession bool
	Title     string
	JSON      bool
	// StreamJSON prints the run as JSON lines as it happens (stream.go).
	StreamJSON bool
	// Reflect is --reflect (given), over config.toml's reflect.
	Reflect bool
}

// runLong is the help of "mecha run"; the --stream-json schema in it is
// the one the manual (docs/manual) shows.
const runLong = `Run a model through a loop of tool calls in a workspace until it answers
without calling a tool or a budget stops it. The final answer goes to
stdout; tool activity and the session id go to stderr. Everything that
shapes a request or constrains the run is recorded in the session's config
record, so the run can be resumed and replayed.

Providers: anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), openai
(OPENAI_API_KEY, OPENAI_BASE_URL), local (llama-server or Ollama at
MECHA_LOCAL_URL, default http://127.0.0.1:8080) and mock (built in, no
network; --mock-script plays a JSON script of turns, in the format that
engine/provider/mock/doc.go of mecha's source specifies). Without -p,
config.toml's default_provider; without -m, its [providers.NAME] model (see
"mecha config --help"). Start llama-server on one slot (-np 1) for seeded
runs to repeat.

The task: the argument, "-" or -f FILE, or stdin when no task is given and
stdin is not a terminal: UTF-8 text of at most 1 MiB (binary input is
refused; an empty task, or none with stdin a terminal, is bad usage). Stdin
piped beside a task given as an argument or a file is appended to it as
context, in a fenced block labelled stdin (redirect from /dev/null to give
none).

Output: when stdout is a terminal, each response's text is shown there as
it streams (a response is known to be the answer only once it ends); the
text of responses that call tools is also written to stderr when stderr is
not a terminal, and the answer is shown once. When stdout is not a
terminal, the answer is printed once at the end, and the text between tool
calls goes to stderr. On a terminal, control characters and escape
sequences from a model, a tool or a file are shown as escapes (\x1b,
\u202e), so they cannot retitle the window or overwrite lines; a pipe or a
file gets the answer's bytes as recorded. --json prints one object at the
end; --stream-json prints one JSON object per line as the run goes:
  {"type":"delta","kind":"text"|"thinking","text":S}
  {"type":"message","index":N,"role":"user"|"assistant","content":[BLOCK...]}
  {"type":"tool_start","id":S,"name":S,"input":JSON}
  {"type":"tool_done","id":S,"name":S,"is_error":B,"content":S,"duration_ms":N}
  {"type":"turn","stop_reason":S,"usage":USAGE}       (usage: the run's so far)
  {"type":"result","session":S|null,"text":S,"turns":N,"usage":USAGE,
   "stop_reason":S,"cost_usd":F|null,"error":S}       (last, in every run that started)
A retried request streams its text again from the start. Fields may be
added; none is removed or changes meaning.

With --resume, the session's earlier messages and taint are restored and
every setting not given on the command line is taken from its last run.
-c (--continue) resumes the newest session of this workspace (-w or the
current directory) that was a run of yours: never a replay, a rerun, a
reflection, an import, an MCP server's or a subagent's session. "last"
names the newest session of any kind (right after "mecha replay", the
replay). Each attach writes its own config record. A session has one
writer at a time: a second --resume of a session in use exits 1 at once,
naming the process that holds it; reading it (sessions show, replay) is
never blocked.

Ctrl-C stops the current turn, writes the run's summary and exits 130; a
second Ctrl-C ends mecha at once. The shell tool is sandboxed by default
(--sandbox, --sandbox-network; see "mecha tool --help" and SECURITY.md).

Project instructions: AGENTS.md at the workspace's root, or CLAUDE.md
when there is none, is added to the system prompt (at most 256 KiB; a link
that leaves the workspace is refused); --no-project-instructions leaves it
out. The config record keeps the prompt, so a replay sends it as recorded.

Permissions: by default a person confirms each call that modifies the
workspace or runs a command (with no terminal such calls are denied and the
model is told so); --yes allows them all, --read-only refuses them all.

The trifecta interlock: once the conversation holds private data (a tool
read the workspace) and untrusted content (a tool brought in something from
outside), a call to a tool that could send data out (it reaches the
network, or runs commands with the network available) is refused with
--trifecta refuse (the default), put to a person with --trifecta ask (no
terminal: refused) and run with --trifecta off. A resumed session starts
from the taint its checkpoints recorded (armed if some messages have none),
and, like the permission mode, runs under the policy asked for now: it is
never inherited. See SECURITY.md.

$MECHA_HOME/learned_rules.md ("mecha learn") is appended to the system
prompt unless --no-learned-rules; when it holds a rule marked private, the
run starts private, as if it had read the data the rule came from.
--reflect (or reflect = true in config.toml) has the model reflect on the
session when the run closes ("mecha reflect"); a failure to reflect is one
line on stderr and leaves the exit status as it was.

Subagents: --tool agent (or subagents = true in config.toml, beside every
tool when --tool is not given) offers the agent tool, with which the model
hands a self-contained sub-task to a child run: {"task", "tools",
"max_turns", "max_output_tokens", "max_cost_usd"}, only task required. The
child runs on the same provider, model and system prompt with a fresh
context holding its task, and its answer, followed by a line naming its
session, is the call's result. Its tools
are a subset of this run's (default all; never agent: one level), under
the same permission mode, trifecta policy and sandbox. Its budgets are
carved from what this run has left and count against this run's, so
delegating never outspends them; children started in one answer share
what is left. Its session is created with its first record and names this
session and the call in its header; "sessions show" names children under
their calls, and --no-session records none. A child that fails gives an
error result and this run goes on. A call is judged by the tools it gives
the child (a call giving only fs_read needs no permission; one giving
web_fetch is refused in an armed conversation), and taint crosses the
boundary both ways. A replay answers agent calls from the recording;
"replay --deep" also replays each child against its own.

Exit status: 0 when the model answered, 3 when a budget stopped the run
(--max-turns, --max-output-tokens, --max-cost-usd), the answer was cut
at --max-tokens (stop reason max_tokens) or the model paused its turn
more times in a row than a run continues it (stop reason pause_turn), 1
on a failure (-c finding no session of the workspace included), 2 on bad
usage, 130 when interrupted.`

const runExample = `  mecha run "what changed since yesterday?"
  git diff | mecha run "review this change"
  mecha run -f task.md --yes
  mecha run -c "and now add a test"
  mecha run --stream-json "list the TODOs" | jq -c 'select(.type=="result")'`

// NewCmdRun builds "mecha run". runF, when not nil, runs in place of the
// command once its flags are parsed and checked (tests use it).
func NewCmdRun(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env, Settings: harness.DefaultSettings()}
	cmd := &cobra.Command{
		Use:     `run [flags] ["<task>" | -]`,
		Short:   "Run an agent on a task in a workspace, recording the whole run",
		Long:    runLong,
		Example: runExample,
		Args:    cmdkit.RangeArgs(0, 1, `at most one task (quote it: mecha run "what changed?")`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Given = cmdkit.Changed(cmd)
			opts.Settings.Given = opts.Given
			if err := opts.validateOutput(); err != nil {
				return err
			}
			if err := opts.readTask(args); err != nil {
				return err
			}
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	attach.Flags(cmd, &opts.Settings)
	f.StringVarP(&opts.TaskFile, "file", "f", "", "read the task from `FILE` (- for stdin)")
	f.StringVar(&opts.Resume, "resume", "", "continue the session `ID` in the same file")
	f.BoolVarP(&opts.Continue, "continue", "c", false, "resume the newest session run in this workspace (not a replay, rerun or reflection)")
	f.BoolVar(&opts.NoSession, "no-session", false, "record nothing")
	f.StringVar(&opts.Title, "title", "", "the session's title (default: the task's first line)")
	f.BoolVar(&opts.JSON, "json", false, `print {"session","text","turns","usage","stop_reason","cost_usd"} instead of the answer`)
	f.BoolVar(&opts.StreamJSON, "stream-json", false, "print the run as JSON lines as it happens (schema in the help above)")
	f.BoolVar(&opts.Reflect, "reflect", false, "when the run closes, have the model reflect on the session (as mecha reflect; default: config.toml's reflect)")
	return cmd
}

// validateOutput checks what is checked before the task is read: the
// flags that contradict each other whatever the task.
func (o *Options) validateOutput() error {
	switch {
	case o.JSON && o.StreamJSON:
		return cmdkit.Usagef("--json and --stream-json contradict each other: choose one")
	case o.Continue && o.given("resume"):
		return cmdkit.Usagef("--continue and --resume both name the session to resume: choose one")
	case o.Continue && o.NoSession:
		return cmdkit.Usagef("--continue records into the session it resumes; it cannot go with --no-session")
	}
	return nil
}

// validate checks the flags before anything is opened or created.
func (o *Options) validate() error {
	switch {
	case strings.TrimSpace(o.Task) == "":
		return cmdkit.Usagef("the task is empty")
	case o.Resume != "" && o.NoSession:
		return cmdkit.Usagef("--resume records into the session it resumes; it cannot go with --no-session")
	case o.Reflect && o.NoSession:
		return cmdkit.Usagef("--reflect reflects on the recorded session; it cannot go with --no-session")
	case o.Resume == "" && o.given("resume"):
		return cmdkit.Usagef("--resume needs a session id (or %s)", session.Last)
	}
	return attach.Usage(o.Settings.Validate())
}

func (o *Options) given(name string) bool { return o.Given != nil && o.Given(name) }

// runResult is the --json output.
type runResult struct {
	Session    *string          `json:"session"`
	Text       string           `json:"text"`
	Turns      int              `json:"turns"`
	Usage      transcript.Usage `json:"usage"`
	StopReason string           `json:"stop_reason"`
	// CostUSD is the run's usage at today's prices; null when the model
	// has none.
	CostUSD *float64 `json:"cost_usd"`
}

func runRun(ctx context.Context, opts *Options) error {
	ref, err := opts.resumed()
	if err != nil {
		return err
	}
	w := attach.World(opts.Env)
	d, err := harness.Open(ctx, w, harness.Attach{Settings: opts.Settings, Resume: ref, NoSession: opts.NoSession,
		Meta: transcript.Meta{Title: opts.title()}})
	if err != nil {
		return err
	}
	defer d.Close() // after the record is closed: the session is held until then
	prev := d.Resumed()
	if prev != nil {
		opts.Env.NoteForeignID(ref, prev.HeaderID)
	}
	out := newOutput(opts, d.Config().Prices())
	p := harness.Prompt{Text: opts.Task, Log: opts.Env.Err}
	if watch := out.onEvent(); watch != nil {
		p.Watch = func(ev agent.Event, _ transcript.Taint) { watch(ev) }
	}
	att, runErr := d.Run(ctx, p)
	if att == nil { // refused before it started, so it recorded nothing
		return runErr
	}
	err = finish(opts, out, att, runErr)
	if opts.reflect(d.Config(), prev) {
		reflectOnClose(ctx, opts, att)
	}
	return err
}

// resumed is the session --resume or -c names (zero for a new session).
func (o *Options) resumed() (session.Ref, error) {
	switch {
	case o.Continue:
		return o.Env.ContinueID(o.Settings.Workspace)
	case o.Resume != "":
		return o.Env.ResolveSession(o.Resume)
	}
	return session.Ref{}, nil
}

// title is the new session's title: --title, else the task's first line
// without the stdin appended to it.
func (o *Options) title() string {
	if o.Title != "" {
		return o.Title
	}
	from := o.titleText
	if from == "" {
		from = o.Task
	}
	return textfmt.Clip(textfmt.OneLine(from), 80)
}

// finish reports the run and turns its outcome into
// the command's result.
func finish(opts *Options, out *output, att *harness.Attached, runErr error) error {
	var sessionID *string
	res := att.Result
	out.provider, out.model = att.Config.Provider, att.Config.Model
	if id := att.Session.ID; id != "" { // "" when nothing was recorded, or even the first record failed
		sessionID = &id
		fmt.Fprintf(opts.Env.Err, "session: %s: %d %s, %s in / %s out, %s\n", id, res.Turns, textfmt.Plural(res.Turns, "turn", "turns"),
			textfmt.Count(res.Usage.InputTokens), textfmt.Count(res.Usage.OutputTokens), res.StopReason)
	}
	if runErr != nil && errors.Is(runErr, context.Canceled) {
		runErr = &cmdkit.InterruptedError{Msg: "interrupted; the transcript keeps everything up to here"}
	}
	if err := out.report(sessionID, res, runErr); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return runErr
	}
	switch res.StopReason {
	case agent.StopMaxTurns, agent.StopMaxOutputTokens, agent.StopMaxCost:
		return &cmdkit.BudgetError{Budget: res.StopReason}
	case agent.StopMaxTokens:
		return &cmdkit.BudgetError{Budget: res.StopReason,
			Msg: "stopped: the answer was cut at --max-tokens (stop reason max_tokens); give a larger --max-tokens for a whole one"}
	case agent.StopPaused:
		return &cmdkit.BudgetError{Budget: res.StopReason,
			Msg: fmt.Sprintf("stopped: the model paused its turn %d times in a row (stop reason pause_turn); the session keeps it as far as it went", agent.MaxPauses+1)}
	}
	return nil
}
