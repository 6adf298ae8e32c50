package runcmd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/subagent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
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

	Provider, Model string
	Workspace       string
	Resume          string
	// Continue is -c: resume the newest session of this workspace that a
	// person ran (cmdkit.ContinueID).
	Continue  bool
	NoSession bool
	Title     string
	JSON      bool
	// StreamJSON prints the run as JSON lines as it happens (stream.go).
	StreamJSON     bool
	MockScript     string
	Tools          []string
	MCP            cmdkit.MCPFlags
	NoLearnedRules bool
	// Reflect is --reflect (given), over config.toml's reflect.
	Reflect bool
	// NoProjectInstructions leaves AGENTS.md (or CLAUDE.md) out of the
	// system prompt.
	NoProjectInstructions bool
	Yes, ReadOnly         bool
	Trifecta              string
	SystemPromptFile      string

	MaxTurns          int
	MaxTokens         int
	MaxOutputTokens   uint64
	MaxCostUSD        float64
	CompactAtTokens   uint64
	CompactKeepRecent int
	Effort            string
	Thinking          bool
	NoCachePrompt     bool
	Temperature       float64
	Seed              uint64
	// Sandbox is --sandbox and --sandbox-network: what confines the shell.
	Sandbox cmdkit.SandboxFlags
	// RequestTimeout bounds the provider's silences (0: config.toml's);
	// it shapes no request, so the config record does not keep it.
	RequestTimeout time.Duration
}

// Defaults of "mecha run".
const (
	defaultMaxTurns          = 50
	defaultMaxTokens         = 8192
	defaultCompactKeepRecent = 6
)

// runLong is the help of "mecha run"; the --stream-json schema in it is
// the one the README documents.
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
(--max-turns, --max-output-tokens, --max-cost-usd) or the answer was cut
at --max-tokens (stop reason max_tokens), 1 on a failure (-c finding no
session of the workspace included), 2 on bad usage, 130 when interrupted.`

const runExample = `  mecha run "what changed since yesterday?"
  git diff | mecha run "review this change"
  mecha run -f task.md --yes
  mecha run -c "and now add a test"
  mecha run --stream-json "list the TODOs" | jq -c 'select(.type=="result")'`

// NewCmdRun builds "mecha run". runF, when not nil, runs in place of the
// command once its flags are parsed and checked (tests use it).
func NewCmdRun(env *cmdkit.Env, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{Env: env}
	cmd := &cobra.Command{
		Use:     `run [flags] ["<task>" | -]`,
		Short:   "Run an agent on a task in a workspace, recording the whole run",
		Long:    runLong,
		Example: runExample,
		Args:    cmdkit.RangeArgs(0, 1, `at most one task (quote it: mecha run "what changed?")`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Given = cmdkit.Changed(cmd)
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
	f.StringVarP(&opts.Provider, "provider", "p", "mock", "model provider: anthropic, openai, local or mock (default: config.toml's default_provider, else mock)")
	f.StringVarP(&opts.Model, "model", "m", "", "model (default: config.toml's [providers.NAME] model, else the provider's own)")
	f.StringVarP(&opts.Workspace, "workspace", "w", "", "the directory the tools work in (default: the current directory)")
	f.StringVarP(&opts.TaskFile, "file", "f", "", "read the task from `FILE` (- for stdin)")
	f.StringVar(&opts.Resume, "resume", "", "continue the session `ID` in the same file")
	f.BoolVarP(&opts.Continue, "continue", "c", false, "resume the newest session run in this workspace (not a replay, rerun or reflection)")
	f.BoolVar(&opts.NoSession, "no-session", false, "record nothing")
	f.StringVar(&opts.Title, "title", "", "the session's title (default: the task's first line)")
	f.BoolVar(&opts.JSON, "json", false, `print {"session","text","turns","usage","stop_reason"} instead of the answer`)
	f.BoolVar(&opts.StreamJSON, "stream-json", false, "print the run as JSON lines as it happens (schema in the help above)")
	f.StringVar(&opts.MockScript, "mock-script", "", "with -p mock, play this JSON `FILE` of turns")
	f.StringArrayVar(&opts.Tools, "tool", nil, "offer only this tool (repeatable; mcp__SERVER for all of a server's tools; agent for subagents; default: every built-in and MCP tool)")
	cmdkit.AddMCPFlags(cmd, &opts.MCP)
	f.BoolVar(&opts.NoLearnedRules, "no-learned-rules", false, "do not append $MECHA_HOME/learned_rules.md to the system prompt")
	f.BoolVar(&opts.Reflect, "reflect", false, "when the run closes, have the model reflect on the session (as mecha reflect; default: config.toml's reflect)")
	f.BoolVar(&opts.NoProjectInstructions, "no-project-instructions", false, "do not add the workspace's AGENTS.md (or CLAUDE.md) to the system prompt")
	f.BoolVar(&opts.Yes, "yes", false, "allow every tool call without asking")
	f.BoolVar(&opts.ReadOnly, "read-only", false, "refuse every call that modifies the workspace or runs a command")
	f.StringVar(&opts.Trifecta, "trifecta", string(tool.TrifectaRefuse), "once private data and untrusted content are both in the conversation, calls that could send data out are: refuse, ask or off")
	addRequestFlags(f, opts)
	opts.Sandbox.Register(cmd)
	cmdkit.RequestTimeoutFlag(cmd, &opts.RequestTimeout)
	return cmd
}

// addRequestFlags adds the flags that shape each request or bound the run:
// the system prompt, budgets, compaction and sampling.
func addRequestFlags(f *pflag.FlagSet, opts *Options) {
	f.StringVar(&opts.SystemPromptFile, "system-prompt-file", "", "use the text of `FILE` as the system prompt")
	f.IntVar(&opts.MaxTurns, "max-turns", defaultMaxTurns, "stop after this many model calls")
	f.IntVar(&opts.MaxTokens, "max-tokens", defaultMaxTokens, "the most tokens one response may have")
	f.Uint64Var(&opts.MaxOutputTokens, "max-output-tokens", 0, "stop once the run has produced this many output tokens")
	f.Float64Var(&opts.MaxCostUSD, "max-cost-usd", 0, "stop once the run has cost this much (needs a price in config.toml)")
	f.Uint64Var(&opts.CompactAtTokens, "compact-at-tokens", 0, "summarise older messages once the context passes this many tokens")
	f.IntVar(&opts.CompactKeepRecent, "compact-keep-recent", defaultCompactKeepRecent, "messages compaction keeps as they are")
	f.StringVar(&opts.Effort, "effort", "", "reasoning effort: low, medium or high")
	f.BoolVar(&opts.Thinking, "thinking", false, "ask for extended thinking (anthropic)")
	f.BoolVar(&opts.NoCachePrompt, "no-cache-prompt", false, "do not ask the server to cache the prompt prefix")
	f.Float64Var(&opts.Temperature, "temperature", 0, "sampling temperature (default: the server's)")
	f.Uint64Var(&opts.Seed, "seed", 0, "sampling seed (default: none)")
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
	case o.MaxTurns < 1:
		return cmdkit.Usagef("--max-turns must be at least 1")
	case o.MaxTokens < 1:
		return cmdkit.Usagef("--max-tokens must be at least 1")
	case o.Reflect && o.NoSession:
		return cmdkit.Usagef("--reflect reflects on the recorded session; it cannot go with --no-session")
	case o.Resume == "" && o.given("resume"):
		return cmdkit.Usagef("--resume needs a session id (or %s)", cmdkit.LastSession)
	case o.given("max-cost-usd") && !(o.MaxCostUSD > 0 && !math.IsInf(o.MaxCostUSD, 1)):
		return cmdkit.Usagef("--max-cost-usd must be a number more than 0, not %v", o.MaxCostUSD)
	case o.given("temperature") && !(o.Temperature >= 0 && !math.IsInf(o.Temperature, 1)):
		return cmdkit.Usagef("--temperature must be a number of 0 or more, not %v", o.Temperature)
	case o.CompactKeepRecent < 1:
		return cmdkit.Usagef("--compact-keep-recent must be at least 1")
	}
	switch o.Effort {
	case "", "low", "medium", "high":
	default:
		return cmdkit.Usagef("--effort must be low, medium or high, not %q", o.Effort)
	}
	if err := o.Sandbox.Validate(); err != nil {
		return err
	}
	if _, err := tool.ParseTrifecta(o.Trifecta); err != nil || o.Trifecta == "" {
		return cmdkit.Usagef("--trifecta must be refuse, ask or off, not %q", o.Trifecta)
	}
	_, err := cmdkit.PermissionMode(o.Yes, o.ReadOnly)
	return err
}

func (o *Options) given(name string) bool { return o.Given != nil && o.Given(name) }

// runResult is the --json output.
type runResult struct {
	Session    *string          `json:"session"`
	Text       string           `json:"text"`
	Turns      int              `json:"turns"`
	Usage      transcript.Usage `json:"usage"`
	StopReason string           `json:"stop_reason"`
}

func runRun(ctx context.Context, opts *Options) error {
	cfgFile, err := opts.Env.Config()
	if err != nil {
		return err
	}
	prev, lock, err := loadResumed(opts)
	if err != nil {
		return err
	}
	defer lock.Release() // after the record is closed, in finish
	rc, err := buildRunConfig(opts, cfgFile, prev)
	if err != nil {
		return err
	}
	prov, err := cmdkit.NewProvider(opts.Env, rc.Provider, cmdkit.ProviderSetup{MockScript: opts.MockScript,
		Config: cfgFile, RequestTimeout: opts.RequestTimeout})
	if err != nil {
		return err
	}
	var wss cmdkit.Workspaces
	defer wss.Close()
	cmdkit.WorkspaceMCPNote(opts.Env, rc.Workspace, opts.MCP)
	servers, err := cmdkit.StartMCPFor(ctx, opts.Env, cfgFile, opts.MCP, rc.Workspace)
	if err != nil {
		return err
	}
	defer servers.Close()
	mcpTools, err := servers.Tools()
	if err != nil {
		return err
	}
	ledger := &agent.Ledger{}
	var rec *session.Lazy // set below; the agent tool asks for it only once the run records
	sub, err := subagentSetup(opts, cfgFile.Prices, ledger, func() string { return sessionID(rec) })
	if err != nil {
		return err
	}
	sub.Provider = func() (provider.Provider, error) { return prov, nil }
	sub.MCPServers = servers.Record
	tools, tracker, err := cmdkit.BuildTools(opts.Env, &wss, rc, cmdkit.ToolSetup{Only: opts.Tools, MCP: mcpTools,
		Subagent: sub, Subagents: cfgFile.Subagents})
	if err != nil {
		return err
	}
	rc.Tools = tools.Names()
	rc.ToolSpecs = tools.TranscriptSpecs()
	rc.MCPServers = servers.Record(rc.Tools)
	rec, history, err := openRecord(opts, &rc, prev)
	if err != nil {
		return err
	}
	var recorder agent.Recorder
	if rec != nil {
		defer rec.Close()
		recorder = rec
	}
	history = learnedTaint(history, rc)
	out := newOutput(opts, cfgFile.Prices, &rc)
	res, runErr := agent.Run(ctx, agent.Options{
		Provider: prov, Tools: tools, Tracker: tracker, Config: rc, Recorder: recorder,
		Prices: cfgFile.Prices, History: history, Now: opts.Env.Now, Log: opts.Env.Err, Ledger: ledger,
		OnEvent: out.onEvent(),
	}, opts.Task)
	if res == nil { // refused before it started, so it recorded nothing
		if errors.Is(runErr, agent.ErrCostBudgetUnpriced) {
			return fmt.Errorf("--max-cost-usd needs a price for %s/%s in config.toml", rc.Provider, rc.Model)
		}
		return runErr
	}
	err = finish(opts, out, rec, res, runErr)
	if opts.reflect(cfgFile, prev) {
		reflectOnClose(ctx, opts, prov, rc, cfgFile.Prices, rec)
	}
	return err
}

// subagentSetup is how the agent tool's children run: on the run's
// provider (set by the caller), budgets carved from the run's ledger,
// each child recorded as a session of its own naming the run's (none with
// --no-session).
func subagentSetup(opts *Options, prices pricing.Table, ledger *agent.Ledger, parentID func() string) (*subagent.Setup, error) {
	sub := &subagent.Setup{Prices: prices, Ledger: ledger, ParentID: parentID, Now: opts.Env.Now, Log: opts.Env.Err}
	if opts.NoSession {
		return sub, nil
	}
	dir, err := opts.Env.SessionDir()
	if err != nil {
		return nil, err
	}
	sub.Sessions = &session.Store{Dir: dir, Now: opts.Env.Now, BackgroundSync: true}
	return sub, nil
}

// sessionID is the id of the session rec records into, "" before it has one.
func sessionID(rec *session.Lazy) string {
	if rec == nil || rec.Writer() == nil {
		return ""
	}
	return rec.Writer().ID()
}

// loadResumed takes the session --resume names and loads it (nil, nil
// without --resume). The session is held from before it is read until the
// run has closed its record: a second writer fails at once (one writer at
// a time), and the history the run continues from cannot change under it.
func loadResumed(opts *Options) (*session.Session, *session.Lock, error) {
	var (
		path string
		err  error
	)
	switch {
	case opts.Continue:
		path, err = opts.Env.ContinueID(opts.Workspace)
	case opts.Resume != "":
		path, err = opts.Env.ResolveSession(opts.Resume)
	default:
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	lock, err := session.Acquire(path)
	if err != nil {
		return nil, nil, err
	}
	s, err := session.Load(path)
	if err != nil {
		lock.Release()
		return nil, nil, err
	}
	opts.Env.NoteForeignID(path, s.HeaderID)
	return s, lock, nil
}

// openRecord prepares what the run records into: the resumed session, a
// new one, or nothing (nil) with --no-session, and returns the history the
// run continues from. Nothing is created or appended until the run records
// its first record: the session is created (or the resumed one opened) and
// this attach's config record appended then, so a run refused before it
// starts leaves no empty session and no empty attach behind.
func openRecord(opts *Options, rc *transcript.Config, prev *session.Session) (*session.Lazy, agent.History, error) {
	var history agent.History
	if opts.NoSession {
		fmt.Fprintln(opts.Env.Err, "session: none (--no-session)")
		return nil, history, nil
	}
	if prev != nil {
		history = agent.HistoryOf(prev)
		if prev.Skipped > 0 {
			fmt.Fprintf(opts.Env.Err, "note: %d unreadable %s in the transcript %s skipped\n", prev.Skipped, textfmt.Plural(prev.Skipped, "line", "lines"), textfmt.Plural(prev.Skipped, "was", "were"))
		}
	}
	return &session.Lazy{Open: func(transcript.Record) (*session.Writer, error) {
		return startRecord(opts, rc, prev)
	}}, history, nil
}

// startRecord opens the resumed session or creates a new one and appends
// this attach's config record.
func startRecord(opts *Options, rc *transcript.Config, prev *session.Session) (*session.Writer, error) {
	var (
		w   *session.Writer
		err error
	)
	if prev != nil {
		w, err = session.OpenWriter(prev.Path)
	} else {
		w, err = createSession(opts, rc)
	}
	if err != nil {
		return nil, err
	}
	// Turn boundaries fsync without holding up the next model call; Close
	// waits for the last one.
	w.SyncInBackground()
	fmt.Fprintf(opts.Env.Err, "session: %s (%s/%s)\n", w.ID(), rc.Provider, rc.Model)
	rc.At = opts.Env.Time().UTC()
	if err := w.Append(rc); err != nil {
		w.Close()
		if prev == nil { // nothing but its header: no session to keep
			os.Remove(w.Path())
		}
		return nil, err
	}
	return w, nil
}

func createSession(opts *Options, rc *transcript.Config) (*session.Writer, error) {
	dir, err := opts.Env.SessionDir()
	if err != nil {
		return nil, err
	}
	store := &session.Store{Dir: dir, Now: opts.Env.Now, BackgroundSync: true}
	title := opts.Title
	if title == "" {
		from := opts.titleText
		if from == "" {
			from = opts.Task
		}
		title = textfmt.Clip(textfmt.OneLine(from), 80)
	}
	return store.Create(transcript.Meta{Provider: rc.Provider, Model: rc.Model, Workspace: rc.Workspace, Title: title})
}

// finish closes the record, reports the run and turns its outcome into
// the command's result.
func finish(opts *Options, out *output, rec *session.Lazy, res *agent.Result, runErr error) error {
	var sessionID *string
	if rec != nil {
		if err := rec.Close(); err != nil && runErr == nil {
			runErr = err
		}
		if w := rec.Writer(); w != nil { // nil when even the first record failed
			id := w.ID()
			sessionID = &id
			fmt.Fprintf(opts.Env.Err, "session: %s: %d %s, %s in / %s out, %s\n", id, res.Turns, textfmt.Plural(res.Turns, "turn", "turns"),
				textfmt.Count(res.Usage.InputTokens), textfmt.Count(res.Usage.OutputTokens), res.StopReason)
		}
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
	}
	return nil
}
