package regresscmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/harness"

	"github.com/mecha-agent/mecha/cli/cmdkit"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/redrive/replay"
	"github.com/mecha-agent/mecha/remote"
)

// RegressOptions are the options of "mecha regress".
type RegressOptions struct {
	Env  *cmdkit.Env
	IDs  []string
	Pins string
	// Attach are the flags regress shares with replay: -p, -m,
	// --mock-script, --request-timeout and the MCP flags.
	Attach harness.Settings
	// Models are the models the suite runs against, each in turn (-m,
	// repeated, and --models): with more than one, side by side.
	Models       []string
	models, list []string
	HTML         string
	InspectLog   string
	OnDivergence string
	Repeat       int
	JSON         bool
	JUnit        string
	Shard        string
	// Shards is the total of shards when the shard comes from
	// JOB_COMPLETION_INDEX.
	Shards int
	// Remote reads the pins from this remote; Run names the run the
	// shard's results are written under there.
	Remote        string
	Run           string
	NoSession     bool
	SkipSlotCheck bool
}

// NewCmdRegress builds "mecha regress".
func NewCmdRegress(env *cmdkit.Env, runF func(context.Context, *RegressOptions) error) *cobra.Command {
	opts := &RegressOptions{Env: env, Attach: harness.DefaultSettings()}
	cmd := &cobra.Command{
		Use:   "regress [ID...]",
		Short: "Replay every pinned session and fail on any divergence",
		Long: `Replay the sessions pinned in $MECHA_HOME/regression-sessions.txt (one id per
line; # comments and blank lines are allowed), or just the ids given, against
the current build, and fail if any of them diverges, is refused or fails.
The pins are machine-local on purpose: transcripts are personal data.

To pin a session:
  1. record it with built-in tools only (an MCP server rewired later breaks
     a pin by drift, not regression), keeping its id:
       ID=$(mecha run --json -p local --no-mcp --no-learned-rules \
         --no-project-instructions --seed 42 --temperature 0 \
         --tool fs_read --tool fs_list -w eval/workspace "TASK" | jq -r .session)
  2. check that it replays clean once: mecha replay "$ID" --on-divergence=error
  3. pin the id, not "last" (after step 2 the newest session is the replay):
       echo "$ID" >> "${MECHA_HOME:-$HOME/.mecha}/regression-sessions.txt"

A pin that diverges means the harness (prompt assembly, tool dispatch,
request shape) or the model changed: read the report before deciding which.

Against the local provider the llama-server must run on one slot (-np 1):
seeded replay only repeats sequentially on a single slot, because continuous
batching lets concurrent requests perturb each other's numerics. regress
checks GET /props and refuses otherwise.

--repeat K replays each pin K times, through one replay door, and measures
reliability rather than one green run: per pin, how many runs were clean,
pass@K (at least one clean) and pass^K (all K clean); for the suite,
pass@1 (the mean share of clean runs), pass@K and pass^K as shares of the
pins. A pin clean in some runs and not in others is named flaky. Every run
must be clean for regress to pass. --json gives each pin "runs", "clean",
"pass_at_k", "pass_hat_k" and "flaky" (and every run's report), the suite
the same over pins; in --junit the rates are properties and a flaky pin is
a failure of type flaky with a flakyFailure per divergent run.

-m names the model every pin is replayed on (on -p's provider, else each
pin's recorded one). Given more than once (-m A -m B, or --models A,B),
the suite runs against each model in turn and the models are compared in
one table: pins clean, pass@1, pass^K when repeated, divergences by kind,
tokens, cost at today's prices and wall time, then each pin's status on
each model; --json gives {"models": [...]}, one suite's object per model.
--html FILE writes the same as a self-contained page (mode 0600) whose
charts are inline SVG: no script, nothing fetched. A pin that is not clean
on any model fails the command.

Under the table, each pin whose request changed since the recording
(system prompt, tools offered or their specs, settings: "replay ID" shows
how) is named with what changed; --system-prompt-file FILE runs the suite
under that system prompt instead of each recorded one.

--inspect-log FILE also writes the run as an eval log of Inspect (the UK
AISI's inspect_ai; its JSON format, version 2), which "inspect view" and
Docent open: each pin's run a sample (its epoch the run, its messages the
replay's session, or the recording's with --no-session), the replay's
verdict its score (C clean, I not), the divergences and request changes
in its metadata, pass@1, pass@K and pass^K the log's metrics. With several
models, one log per model, the model's name added to FILE's. Name it
.json: Inspect reads a log by its extension, and lists one in a log
directory only when its name starts with a time (2026-12-01T10-00-00...).

--shard I/N runs the I-th of N deterministic slices of the pins, so a CI
matrix can split a large set across machines. --shards N takes I from
JOB_COMPLETION_INDEX (0-based, as a Kubernetes Indexed Job sets it).

--remote NAME reads the pins from the remote (its pins.json, which "mecha
regress pin ID --remote NAME" adds to) instead of the local file, and pulls
the pinned sessions of the shard the store lacks. With --run RUNID the
shard's results go to the remote, and "mecha regress report --remote NAME
--run RUNID" merges the shards into one table and one JUnit file.`,
		// Any words that are not "pin" or "report" are session ids.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return regressRun(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Pins, "pins", "", "the pin `FILE` (default: $MECHA_HOME/regression-sessions.txt)")
	attach.CompareModelFlags(cmd, &opts.Attach, &opts.models, &opts.list)
	attach.ReplayPromptFlag(cmd, &opts.Attach)
	f.StringVar(&opts.OnDivergence, "on-divergence", "error", "error (any divergence fails) or stop (only structural ones fail)")
	f.IntVar(&opts.Repeat, "repeat", 1, "replay each pin `K` times: pass@1, pass@K and pass^K, and the flaky pins named")
	f.BoolVar(&opts.JSON, "json", false, "print the results as JSON")
	f.StringVar(&opts.JUnit, "junit", "", "also write a JUnit XML report to `FILE`")
	f.StringVar(&opts.InspectLog, "inspect-log", "", "also write the run as an Inspect eval log (JSON) to `FILE`: each pin's run a sample")
	f.StringVar(&opts.HTML, "html", "", "also write the results as a self-contained HTML page with charts to `FILE`")
	f.StringVar(&opts.Shard, "shard", "", "run only shard `I/N` of the pins (1-based)")
	f.IntVar(&opts.Shards, "shards", 0, "run shard JOB_COMPLETION_INDEX+1 of `N` (a Kubernetes Indexed Job)")
	f.StringVar(&opts.Remote, "remote", "", "read the pins from remote `NAME` and pull the sessions it lacks")
	f.StringVar(&opts.Run, "run", "", "with --remote, write this shard's results under run `RUNID`")
	f.BoolVar(&opts.NoSession, "no-session", false, "do not record the replays as sessions")
	f.BoolVar(&opts.SkipSlotCheck, "skip-slot-check", false, "do not require a single-slot llama-server for the local provider")
	attach.RequestTimeoutFlag(cmd, &opts.Attach.RequestTimeout)
	attach.MCPFlags(cmd, &opts.Attach.MCP)
	cmd.AddCommand(NewCmdPin(env, nil), NewCmdReport(env, nil))
	return cmd
}

// validate checks the flags before anything is read.
func (o *RegressOptions) validate() error {
	if mode, err := replay.ParseMode(o.OnDivergence); err != nil || mode == replay.ModeLive {
		return cmdkit.Usagef("regress: --on-divergence must be error or stop")
	}
	if o.Repeat < 1 {
		return cmdkit.Usagef("regress: --repeat must be at least 1")
	}
	if slices.Contains(o.IDs, "") {
		return cmdkit.Usagef("regress: a session id is empty")
	}
	if err := o.resolveShard(); err != nil {
		return err
	}
	if o.Run != "" && (o.Remote == "" || !remote.ValidRun(o.Run)) {
		return cmdkit.Usagef("regress: --run takes --remote, and a run id of letters, digits, '.', '_' and '-'")
	}
	if o.Remote != "" && o.Pins != "" {
		return cmdkit.Usagef("regress: --remote reads the remote's pins: drop --pins")
	}
	if _, _, err := parseShard(o.Shard); err != nil {
		return err
	}
	o.Models = nil
	for _, m := range append(append([]string{}, o.models...), o.list...) {
		m = strings.TrimSpace(m)
		switch {
		case m == "":
			return cmdkit.Usagef("regress: a model named by -m or --models is empty")
		case slices.Contains(o.Models, m):
			return cmdkit.Usagef("regress: model %q is named twice", m)
		}
		o.Models = append(o.Models, m)
	}
	if len(o.Models) == 1 {
		o.Attach.Model = o.Models[0]
	}
	return attach.Usage(o.Attach.Validate())
}

func regressRun(ctx context.Context, opts *RegressOptions) error {
	mode, _ := replay.ParseMode(opts.OnDivergence)
	shardI, shardN, _ := parseShard(opts.Shard)
	// A config.toml that cannot be read fails the command before any pin.
	if _, err := opts.Env.Config(); err != nil {
		return err
	}
	ids := opts.IDs
	var rem *remote.Remote
	if opts.Remote != "" {
		var err error
		if rem, err = openRemote(opts.Env, opts.Remote); err != nil {
			return err
		}
		if ids, err = remotePins(ctx, opts, rem, shardI, shardN); err != nil {
			return err
		}
	} else if len(ids) == 0 {
		var err error
		if ids, err = readPins(opts.Env, opts.Pins); err != nil {
			return err
		}
	}
	all := ids
	ids = shard(ids, shardI, shardN)
	if len(ids) == 0 {
		fmt.Fprintln(opts.Env.Err, "regress: no pinned sessions to replay")
	}
	r := &runner{opts: opts, mode: mode, ids: ids}
	var sums []regressSummary
	for _, set := range r.settings() {
		sum, err := r.suite(ctx, set)
		if err != nil {
			return err
		}
		sums = append(sums, sum)
	}
	if rem != nil && opts.Run != "" {
		if err := putShard(ctx, opts, rem, all, shardI, shardN, sums); err != nil {
			return err
		}
	}
	if err := writeReports(opts, sums); err != nil {
		return err
	}
	return verdict(sums)
}

var errSlots = errors.New("regress: the local server must have one slot")

// checkSlots refuses a llama-server that batches requests across slots.
func checkSlots(ctx context.Context, env *cmdkit.Env) error {
	base := env.Vars.Get("MECHA_LOCAL_URL")
	if base == "" {
		base = openai.LocalDefaultBaseURL
	}
	url := strings.TrimRight(base, "/") + "/props"
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: %v", errSlots, err)
	}
	resp, err := env.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("%w: cannot read %s: %v (start llama-server with -np 1, or pass --skip-slot-check for a server without /props)", errSlots, url, err)
	}
	defer resp.Body.Close()
	var props struct {
		TotalSlots *int `json:"total_slots"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&props) != nil || props.TotalSlots == nil {
		return fmt.Errorf("%w: %s did not report total_slots (HTTP %d); is it llama-server? Pass --skip-slot-check to run anyway", errSlots, url, resp.StatusCode)
	}
	if *props.TotalSlots != 1 {
		return fmt.Errorf("%w: the llama-server at %s has %d slots; seeded replay only repeats on a single slot, because continuous batching makes concurrent requests perturb each other: restart it with -np 1", errSlots, base, *props.TotalSlots)
	}
	return nil
}

// shellQuote quotes s for a shell when it holds more than a path's
// ordinary characters.
func shellQuote(s string) string {
	if strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readPins reads the pin file, saying how to start one when there is none.
func readPins(env *cmdkit.Env, path string) ([]string, error) {
	path, err := env.PinsPath(path)
	if err != nil {
		return nil, err
	}
	ids, err := cmdkit.ReadPins(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("regress: no pin file at %s; to pin a session (one recorded with built-in tools only), check it replays clean with mecha replay ID, then add its id: echo ID >> %s (one id a line; # starts a comment)", path, shellQuote(path))
	}
	if err != nil {
		return nil, fmt.Errorf("regress: %w", err)
	}
	return ids, nil
}

func parseShard(s string) (int, int, error) {
	if s == "" {
		return 1, 1, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, erri := strconv.Atoi(a)
	n, errn := strconv.Atoi(b)
	if !ok || erri != nil || errn != nil || n < 1 || i < 1 || i > n {
		return 0, 0, cmdkit.Usagef("--shard must be I/N with 1 <= I <= N, not %q", s)
	}
	return i, n, nil
}

// shard keeps the pins of shard i of n: the pins at positions i-1, i-1+n,
// ... of the list in file order, so every pin falls in exactly one shard.
func shard(ids []string, i, n int) []string {
	if n == 1 {
		return ids
	}
	var out []string
	for k, id := range ids {
		if k%n == i-1 {
			out = append(out, id)
		}
	}
	return out
}
