package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/mecha-agent/mecha/agent"
	"github.com/mecha-agent/mecha/session"
	"github.com/mecha-agent/mecha/transcript"
)

// RunOptions are the options of "mecha run".
type RunOptions struct {
	Env   *Env
	Task  string
	flags *pflag.FlagSet // to tell a flag given from its default

	Provider, Model  string
	Workspace        string
	Resume           string
	NoSession        bool
	Title            string
	JSON             bool
	MockScript       string
	Tools            []string
	NoMCP            bool
	NoLearnedRules   bool
	Yes, ReadOnly    bool
	SystemPromptFile string

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
}

// Defaults of "mecha run".
const (
	defaultMaxTurns          = 50
	defaultMaxTokens         = 8192
	defaultCompactKeepRecent = 6
)

// NewCmdRun builds "mecha run".
func NewCmdRun(env *Env) *cobra.Command {
	opts := &RunOptions{Env: env}
	cmd := &cobra.Command{
		Use:   `run [flags] "<task>"`,
		Short: "Run an agent on a task in a workspace, recording the whole run",
		Long: `Run a model through a loop of tool calls in a workspace until it answers
without calling a tool or a budget stops it. The final answer goes to
stdout; tool activity and the session id go to stderr. Everything that
shapes a request or constrains the run is recorded in the session's config
record, so the run can be resumed and replayed.

Providers: anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), openai
(OPENAI_API_KEY, OPENAI_BASE_URL), local (llama-server or Ollama at
MECHA_LOCAL_URL, default http://127.0.0.1:8080) and mock (built in, no
network; --mock-script plays a script of turns).

With --resume, the session's earlier messages and taint are restored and
every setting not given on the command line is taken from its last run.

Permissions: by default a person confirms each call that modifies the
workspace or runs a command (with no terminal such calls are denied and the
model is told so); --yes allows them all, --read-only refuses them all.

Exit status: 0 when the model answered, 3 when a budget stopped the run
(--max-turns, --max-output-tokens, --max-cost-usd), 1 on a failure, 2 on
bad usage, 130 when interrupted.`,
		Args: exactArgs(1, `the task (quote it: mecha run "what changed?")`),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Task = args[0]
			opts.flags = cmd.Flags()
			return runRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Provider, "provider", "p", "mock", "model provider: anthropic, openai, local or mock (default: config.toml's default_provider, else mock)")
	f.StringVarP(&opts.Model, "model", "m", "", "model (default: config.toml's [providers.NAME] model, else the provider's own)")
	f.StringVarP(&opts.Workspace, "workspace", "w", "", "the directory the tools work in (default: the current directory)")
	f.StringVar(&opts.Resume, "resume", "", "continue the session `ID` in the same file")
	f.BoolVar(&opts.NoSession, "no-session", false, "record nothing")
	f.StringVar(&opts.Title, "title", "", "the session's title (default: the task's first line)")
	f.BoolVar(&opts.JSON, "json", false, `print {"session","text","turns","usage","stop_reason"} instead of the answer`)
	f.StringVar(&opts.MockScript, "mock-script", "", "with -p mock, play this JSON `FILE` of turns")
	f.StringArrayVar(&opts.Tools, "tool", nil, "offer only this tool (repeatable; default: every built-in tool)")
	f.BoolVar(&opts.NoMCP, "no-mcp", false, "offer no tools from MCP servers")
	f.BoolVar(&opts.NoLearnedRules, "no-learned-rules", false, "do not append $MECHA_HOME/learned_rules.md to the system prompt")
	f.BoolVar(&opts.Yes, "yes", false, "allow every tool call without asking")
	f.BoolVar(&opts.ReadOnly, "read-only", false, "refuse every call that modifies the workspace or runs a command")
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
	return cmd
}

// runResult is the --json output.
type runResult struct {
	Session    *string          `json:"session"`
	Text       string           `json:"text"`
	Turns      int              `json:"turns"`
	Usage      transcript.Usage `json:"usage"`
	StopReason string           `json:"stop_reason"`
}

func runRun(ctx context.Context, opts *RunOptions) error {
	if strings.TrimSpace(opts.Task) == "" {
		return usagef("the task is empty")
	}
	if opts.Yes && opts.ReadOnly {
		return usagef("--yes and --read-only contradict each other")
	}
	if opts.Resume != "" && opts.NoSession {
		return usagef("--resume records into the session it resumes; it cannot go with --no-session")
	}
	cfgFile, err := opts.Env.Config()
	if err != nil {
		return err
	}
	var (
		prev *session.Session
		path string
	)
	if opts.Resume != "" {
		if path, err = resolveSession(opts.Env, opts.Resume); err != nil {
			return err
		}
		if prev, err = session.Load(path); err != nil {
			return err
		}
	}
	rc, err := buildRunConfig(opts, cfgFile, prev)
	if err != nil {
		return err
	}
	prov, err := newProvider(opts.Env, rc.Provider, providerSetup{MockScript: opts.MockScript})
	if err != nil {
		return err
	}
	tools, tracker, err := buildTools(opts.Env, rc, toolSetup{Only: opts.Tools})
	if err != nil {
		return err
	}
	rc.Tools = tools.Names()
	rc.ToolSpecs = tools.TranscriptSpecs()

	// Open the record: a new session, or the resumed one.
	var (
		w       *session.Writer
		history agent.History
	)
	switch {
	case opts.NoSession:
		fmt.Fprintln(opts.Env.Err, "session: none (--no-session)")
	case prev != nil:
		if w, err = session.OpenWriter(path); err != nil {
			return err
		}
		history = agent.HistoryOf(prev)
		if prev.Skipped > 0 {
			fmt.Fprintf(opts.Env.Err, "note: %d unreadable %s in the transcript were skipped\n", prev.Skipped, plural(prev.Skipped, "line", "lines"))
		}
	default:
		dir, err := opts.Env.SessionDir()
		if err != nil {
			return err
		}
		store := &session.Store{Dir: dir, Now: opts.Env.Now, BackgroundSync: true}
		title := opts.Title
		if title == "" {
			title = clip(oneLine(opts.Task), 80)
		}
		if w, err = store.Create(transcript.Meta{Provider: rc.Provider, Model: rc.Model, Workspace: rc.Workspace, Title: title}); err != nil {
			return err
		}
	}
	var rec agent.Recorder
	var sessionID *string
	if w != nil {
		defer w.Close()
		// Turn boundaries fsync without holding up the next model call;
		// Close waits for the last one.
		w.SyncInBackground()
		id := w.ID()
		sessionID = &id
		fmt.Fprintf(opts.Env.Err, "session: %s (%s/%s)\n", id, rc.Provider, rc.Model)
		rc.At = opts.Env.now().UTC()
		if err := w.Append(&rc); err != nil {
			return err
		}
		rec = w
	}

	res, runErr := agent.Run(ctx, agent.Options{
		Provider: prov, Tools: tools, Tracker: tracker, Config: rc, Recorder: rec,
		Prices: cfgFile.Prices, History: history, Now: opts.Env.Now, Log: opts.Env.Err,
	}, opts.Task)
	if res == nil { // refused before it started
		return runErr
	}
	if w != nil {
		if err := w.Close(); err != nil && runErr == nil {
			runErr = err
		}
		fmt.Fprintf(opts.Env.Err, "session: %s: %d %s, %s in / %s out, %s\n", w.ID(), res.Turns, plural(res.Turns, "turn", "turns"),
			count(res.Usage.InputTokens), count(res.Usage.OutputTokens), res.StopReason)
	}
	if runErr != nil {
		if errors.Is(runErr, context.Canceled) {
			return &exitError{code: ExitInterrupted, msg: "interrupted; the transcript keeps everything up to here"}
		}
		return runErr
	}
	if opts.JSON {
		if err := writeJSON(opts.Env.Out, runResult{sessionID, res.Text, res.Turns, res.Usage, res.StopReason}); err != nil {
			return err
		}
	} else if res.Text != "" {
		fmt.Fprintln(opts.Env.Out, res.Text)
	}
	switch res.StopReason {
	case agent.StopMaxTurns, agent.StopMaxOutputTokens, agent.StopMaxCost:
		return &exitError{code: ExitBudget, msg: "stopped: the run reached its " + res.StopReason + " budget"}
	}
	return nil
}

// workspaceDir resolves -w (or the current directory) to an absolute,
// existing directory.
func workspaceDir(arg string) (string, error) {
	if arg == "" {
		arg = "."
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("workspace: %s is not a directory", abs)
	}
	return abs, nil
}
