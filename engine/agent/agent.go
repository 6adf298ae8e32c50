package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Stop reasons written in the summary.
const (
	StopEndTurn         = "end_turn"          // the model answered without calling a tool
	StopMaxTokens       = "max_tokens"        // the answer was cut by --max-tokens
	StopMaxTurns        = "max_turns"         // --max-turns model calls were made
	StopMaxOutputTokens = "max_output_tokens" // the run produced --max-output-tokens
	StopMaxCost         = "max_cost_usd"      // the run cost --max-cost-usd
	StopInterrupted     = "interrupted"       // the context was cancelled (SIGINT)
	StopError           = "error"             // the provider failed
	StopPaused          = "pause_turn"        // the model paused its turn more than MaxPauses times in a row
	StopCompacted       = "compacted"         // a run that only compacted the conversation (Options.CompactOnly)
)

// MaxPauses bounds the continuations of a paused turn in a row: a model
// that pauses again after that many ends the run (StopPaused), its turn
// recorded as far as it went. Each continuation is a model call, counted
// against --max-turns and the budgets like any other.
const MaxPauses = 5

// Recorder receives a run's records as they happen; *session.Writer is one.
// An error from it ends the run: a run that cannot be recorded is not
// carried on silently.
type Recorder interface {
	Append(recs ...transcript.Record) error
	Sync() error
}

// History is what a resumed run starts from.
type History struct {
	// Messages is the conversation as the model last saw it.
	Messages []transcript.Message
	// Compacted is true when Messages[0] is a compaction summary.
	Compacted bool
	// Count is the number of message records already in the session.
	Count int
	// Taint is the taint the run starts from: the merged taint of the
	// session so far, armed when messages are of unknown provenance (see
	// session.StartTaint).
	Taint transcript.Taint
	// TaintWhy says where Taint came from, for the interlock's messages.
	TaintWhy string
	// Turns is the turns of the session's earlier runs (its summaries'
	// sum), which the run's summary adds its own to as session_turns.
	Turns int
	// ContextTokens is the size of the context at the last model call
	// before this run (HistoryOf takes it from the last summary): the run
	// compacts before its first call when it passes compact_at_tokens, as
	// it would between two calls.
	ContextTokens uint64
}

// HistoryOf is what a run resumed from s starts from: the conversation as
// the model last saw it, the number of messages in the file, the taint.
func HistoryOf(s *session.Session) History {
	h := History{Messages: s.Context(), Count: len(s.Messages())}
	var uncovered int
	h.Taint, uncovered = s.StartTaint()
	h.TaintWhy = "an earlier run of this session"
	if uncovered > 0 {
		h.TaintWhy = fmt.Sprintf("%d earlier %s no taint checkpoint covers: unknown provenance is never clean",
			uncovered, textfmt.Plural(uncovered, "message", "messages"))
	}
	for _, r := range s.Records {
		switch r := r.(type) {
		case *transcript.Compaction:
			h.Compacted = true
			h.ContextTokens = 0
		case *transcript.Summary:
			h.Turns = transcript.AddTurns(h.Turns, r.Turns)
			h.ContextTokens = r.ContextTokens
		}
	}
	return h
}

// Options configure one run.
type Options struct {
	Provider provider.Provider
	// Tools are offered to the model in registry order; gate and track them
	// before passing them in.
	Tools *tool.Registry
	// Tracker, when set, reports the taint of the calls that ran. Run
	// starts it from History.Taint, and records a taint checkpoint after
	// each turn whose calls made the taint grow, so that the transcript
	// shows where the conversation became private, untrusted or both.
	Tracker *tool.Tracker
	// Config is the run configuration, as recorded: the model, system
	// prompt, sampling, budgets and compaction settings are read from it.
	Config   transcript.Config
	Recorder Recorder // nil records nothing
	Prices   pricing.Table
	History  History
	Now      func() time.Time
	// Log receives one line per tool call and result (stderr in the CLI).
	Log io.Writer
	// Dispatcher, when set, answers tool calls instead of running them all.
	Dispatcher Dispatcher
	// OnEvent, when set, sees the run as it happens (streamed text, each
	// message recorded, calls starting and ending, each answer's usage),
	// one event at a time. It must not block for long: the run waits.
	OnEvent func(Event)
	// Steer, when set, is asked once the calls of an answer have results,
	// before they are recorded: each string it returns rides as a text
	// block beside those results in the same user message. That is how a
	// person steers a run while its tools work (replay flags it).
	Steer func() []string
	// Ledger, when set, counts this run's model calls and usage together
	// with those of the child runs its tools start (subagents, which carve
	// their budgets from it): the run's budgets (max turns, output tokens,
	// cost) are judged by the ledger's totals, so what a child spent counts
	// against them. The summary still records the run's own usage.
	Ledger *Ledger
	// CompactOnly makes the run a compaction asked for (the chat's
	// /compact) instead of a prompt: every message before the last answer
	// is replaced by a summary the model writes, following
	// CompactInstructions when set, whatever the context's size; no tool
	// runs and the run ends with StopCompacted. A conversation with
	// nothing to compact fails with ErrNothingToCompact, recording nothing.
	CompactOnly         bool
	CompactInstructions string
	// Attach are blocks sent after the prompt's text in its message: the
	// images the person attached (their bytes loaded, and kept in the
	// blob store the blocks name).
	Attach []transcript.Block
}

// Result is how a run ended.
type Result struct {
	Text       string // the text of the last assistant answer
	Turns      int    // model calls that answered
	Usage      transcript.Usage
	StopReason string
	// Err is the provider or recording error that ended the run, if any.
	Err error
	// ContextTokens is the size of the context at the run's last model
	// call (prompt and answer tokens; 0 after a compaction), for the next
	// run's History.ContextTokens.
	ContextTokens uint64
}

type run struct {
	opts    Options
	cfg     transcript.Config
	ctx     []transcript.Message // what the model sees
	origin  []int                // session message index of each ctx entry, -1 for a summary
	count   int                  // message records in the session
	res     Result
	lastCtx uint64 // prompt + answer tokens of the last call: the context size
	// recorded is the taint of the last checkpoint written (or the one the
	// run started from).
	recorded transcript.Taint
	emitMu   sync.Mutex
}

// ErrCostBudgetUnpriced means a run was given a cost budget for a model
// with no price, so the budget could never be enforced.
var ErrCostBudgetUnpriced = errors.New("agent: a cost budget needs a price for the model")

// Run sends prompt (when non-empty) after the history and loops until the
// model stops calling tools or a budget ends the run. A turn the model
// paused (provider.StopPauseTurn, without tool calls) is continued: the
// paused answer, recorded, is sent back last and the model's next answer
// is recorded after it, at most MaxPauses times in a row. It always records a
// taint checkpoint and a summary, even when the run fails; the returned
// error is the failure (also in Result.Err).
func Run(ctx context.Context, opts Options, prompt string) (*Result, error) {
	if opts.Provider == nil || opts.Tools == nil {
		return nil, errors.New("agent: a provider and tools are required")
	}
	r := &run{opts: opts, cfg: opts.Config, count: opts.History.Count, recorded: opts.History.Taint,
		lastCtx: opts.History.ContextTokens}
	if r.cfg.MaxCostUSD != nil {
		if _, ok := opts.Prices.Lookup(r.cfg.Provider, r.cfg.Model); !ok {
			return nil, fmt.Errorf("%w: %s/%s has no price", ErrCostBudgetUnpriced, r.cfg.Provider, r.cfg.Model)
		}
	}
	if opts.Tracker != nil && !opts.History.Taint.Clean() {
		opts.Tracker.Start(opts.History.Taint, opts.History.TaintWhy)
	}
	r.ctx = append(r.ctx, opts.History.Messages...)
	for i := range r.ctx {
		r.origin = append(r.origin, r.count-len(r.ctx)+i)
	}
	if opts.History.Compacted && len(r.origin) > 0 {
		r.origin[0] = -1
	}
	if opts.CompactOnly {
		if r.lastAnswer() <= 0 {
			return nil, ErrNothingToCompact
		}
		err := r.repairDangling()
		if err == nil {
			err = r.compactNow(ctx)
		}
		return r.close(err)
	}
	return r.close(r.loop(ctx, prompt))
}

// close records the closing records of a run that ended with err: the
// taint checkpoint and the summary, whatever happened, interrupts included.
func (r *run) close(err error) (*Result, error) {
	opts := r.opts
	taint := opts.History.Taint
	if opts.Tracker != nil {
		taint = taint.Merge(opts.Tracker.Taint())
	}
	sum := &transcript.Summary{Usage: r.res.Usage, Turns: r.res.Turns, Provider: r.cfg.Provider, Model: r.cfg.Model,
		StopReason: r.res.StopReason, At: r.now(), ContextTokens: r.lastCtx}
	total := transcript.AddTurns(opts.History.Turns, r.res.Turns)
	sum.SessionTurns = &total
	if err != nil {
		sum.Error = textfmt.OneLine(err.Error())
	}
	if rerr := r.record(&taint, sum); rerr != nil && err == nil {
		err = rerr
	}
	if r.opts.Recorder != nil {
		if serr := r.opts.Recorder.Sync(); serr != nil && err == nil {
			err = serr
		}
	}
	r.res.Err = err
	r.res.ContextTokens = r.lastCtx
	return &r.res, err
}

func (r *run) now() time.Time {
	if r.opts.Now != nil {
		return r.opts.Now().UTC()
	}
	return time.Now().UTC()
}

func (r *run) record(recs ...transcript.Record) error {
	if r.opts.Recorder == nil {
		return nil
	}
	if err := r.opts.Recorder.Append(recs...); err != nil {
		r.res.StopReason = StopError
		return fmt.Errorf("agent: recording failed: %w", err)
	}
	return nil
}

// addMessage records a message and appends it to what the model sees.
func (r *run) addMessage(m transcript.Message) error {
	m.At = r.now()
	if err := r.record(&m); err != nil {
		return err
	}
	r.ctx = append(r.ctx, m)
	r.origin = append(r.origin, r.count)
	r.count++
	r.emit(Event{Kind: EventMessage, Message: &m, Index: r.count - 1})
	return nil
}

func (r *run) loop(ctx context.Context, prompt string) error {
	if err := r.repairDangling(); err != nil {
		return err
	}
	if prompt != "" {
		content := append([]transcript.Block{transcript.TextBlock(prompt)}, r.opts.Attach...)
		if err := r.addMessage(transcript.Message{Role: transcript.RoleUser, Content: content}); err != nil {
			return err
		}
	}
	maxTurns := r.cfg.MaxTurns
	paused := 0 // continuations of a paused turn in a row
	for {
		if maxTurns > 0 && r.turnsSpent() >= maxTurns {
			r.res.StopReason = StopMaxTurns
			return nil
		}
		// A child run (a subagent) may have spent what was left.
		if stop := r.overBudget(); stop != "" && r.opts.Ledger != nil {
			r.res.StopReason = stop
			return nil
		}
		if err := r.maybeCompact(ctx); err != nil {
			return r.failed(ctx, err)
		}
		resp, err := r.opts.Provider.Complete(ctx, r.request(r.ctx, r.opts.Tools.Specs()))
		if err != nil {
			return r.failed(ctx, err)
		}
		r.res.Turns++
		r.res.Usage = r.res.Usage.Add(resp.Usage)
		if r.opts.Ledger != nil {
			r.opts.Ledger.add(1, resp.Usage)
		}
		r.emit(Event{Kind: EventTurn, Usage: r.res.Usage, StopReason: resp.StopReason})
		r.noteSkipped(resp.Skipped)
		u := resp.Usage
		r.lastCtx = u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens + u.OutputTokens
		if err := r.addMessage(transcript.Message{Role: transcript.RoleAssistant, Content: resp.Content, StopReason: resp.NativeStopReason}); err != nil {
			return err
		}
		calls := resp.ToolCalls()
		if stop := r.overBudget(); stop != "" {
			r.res.StopReason = stop
			if len(calls) > 0 {
				// Answer the calls so the conversation stays well formed for
				// a resume or a replay; nothing was run.
				results := make([]transcript.Block, len(calls))
				for i, c := range calls {
					results[i] = transcript.ToolResultBlock(c.ID, "not run: the run stopped at its "+stop+" budget", true)
				}
				return r.addMessage(transcript.Message{Role: transcript.RoleUser, Content: results})
			}
			r.res.Text = transcript.TextOf(resp.Content)
			return nil
		}
		if len(calls) == 0 && resp.StopReason == provider.StopPauseTurn {
			// The model paused its turn: the paused answer, now last in the
			// conversation, goes back as it is and the model continues.
			r.res.Text = transcript.TextOf(resp.Content)
			if paused >= MaxPauses {
				r.res.StopReason = StopPaused
				return nil
			}
			paused++
			if err := r.sync(); err != nil {
				return err
			}
			if ctx.Err() != nil {
				r.res.StopReason = StopInterrupted
				return ctx.Err()
			}
			continue
		}
		paused = 0
		if len(calls) == 0 {
			r.res.Text = transcript.TextOf(resp.Content)
			r.res.StopReason = StopEndTurn
			if resp.StopReason == provider.StopMaxTokens {
				r.res.StopReason = StopMaxTokens
			}
			return nil
		}
		results, stop := r.answer(ctx, calls)
		results = append(results, r.steering()...)
		if err := r.addMessage(transcript.Message{Role: transcript.RoleUser, Content: results}); err != nil {
			return err
		}
		if err := r.checkpointIfGrown(); err != nil {
			return err
		}
		// A turn ends when its results are recorded: sync there (and once
		// more when the run ends).
		if err := r.sync(); err != nil {
			return err
		}
		if stop != "" {
			r.res.StopReason = stop
			return nil
		}
		if ctx.Err() != nil {
			r.res.StopReason = StopInterrupted
			return ctx.Err()
		}
	}
}

// checkpointIfGrown records a taint checkpoint when the calls of the turn
// just answered made the taint grow: the first checkpoint after a message
// covers it, so the transcript then places the moment the conversation
// became private or untrusted at this turn, not at the end of the run.
func (r *run) checkpointIfGrown() error {
	if r.opts.Tracker == nil {
		return nil
	}
	t := r.recorded.Merge(r.opts.Tracker.Taint())
	if t == r.recorded {
		return nil
	}
	r.recorded = t
	return r.record(&t)
}

// failed classifies an error that ended the loop.
func (r *run) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		r.res.StopReason = StopInterrupted
		return ctx.Err()
	}
	r.res.StopReason = StopError
	return err
}

func (r *run) sync() error {
	if r.opts.Recorder == nil {
		return nil
	}
	if err := r.opts.Recorder.Sync(); err != nil {
		r.res.StopReason = StopError
		return fmt.Errorf("agent: recording failed: %w", err)
	}
	return nil
}

// turnsSpent is the model calls counted against --max-turns: the run's
// own, and its children's when it keeps a Ledger.
func (r *run) turnsSpent() int {
	if r.opts.Ledger != nil {
		n, _ := r.opts.Ledger.Spent()
		return n
	}
	return r.res.Turns
}

// usageSpent is the usage counted against the run's budgets (see
// turnsSpent).
func (r *run) usageSpent() transcript.Usage {
	if r.opts.Ledger != nil {
		_, u := r.opts.Ledger.Spent()
		return u
	}
	return r.res.Usage
}

// overBudget returns the budget the run has used up, or "".
func (r *run) overBudget() string {
	u := r.usageSpent()
	if m := r.cfg.MaxOutputTokens; m != nil && u.OutputTokens >= *m {
		return StopMaxOutputTokens
	}
	if m := r.cfg.MaxCostUSD; m != nil {
		if cost, ok := r.opts.Prices.Cost(r.cfg.Provider, r.cfg.Model, u); ok && cost >= *m {
			return StopMaxCost
		}
	}
	return ""
}

// UnknownOutcome is the result a resume records, and shows the model, for a
// call the earlier run made but never recorded a result for. The run died
// between recording the call and recording its result: while the call ran,
// or before it started, no one can tell which. So the record says the
// outcome is unknown, never that the call did not run.
const UnknownOutcome = "outcome unknown: the run ended after this call was made and before its result was recorded. " +
	"It may have run, completely or in part, and its effects may be in place: check before running it again."

// repairDangling answers tool calls left without results by a run that died
// between a model answer and its tool results, so the next request is well
// formed. The answers are recorded like any other message, marked as made
// up by the harness (transcript.Block.OutcomeUnknown).
func (r *run) repairDangling() error {
	if len(r.ctx) == 0 {
		return nil
	}
	last := r.ctx[len(r.ctx)-1]
	if last.Role != transcript.RoleAssistant {
		return nil
	}
	var results []transcript.Block
	for _, b := range last.Content {
		if b.Type == transcript.BlockToolUse {
			results = append(results, transcript.UnknownOutcomeBlock(b.ID, UnknownOutcome))
		}
	}
	if len(results) == 0 {
		return nil
	}
	return r.addMessage(transcript.Message{Role: transcript.RoleUser, Content: results})
}
