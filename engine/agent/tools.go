package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Dispatcher decides how the tool calls of one answer are answered. Without
// one, every call runs, concurrently. A replay answers calls from the
// recording and passes to run only those that must run for real.
type Dispatcher interface {
	// Dispatch returns one result per call, in call order. A non-empty stop
	// ends the run, with stop as its reason, once the results are recorded.
	Dispatch(ctx context.Context, calls []transcript.Block, run RunFunc) (results []tool.Result, stop string)
}

// RunFunc runs calls for real, concurrently, through the run's tools, and
// returns their results in call order.
type RunFunc func(ctx context.Context, calls []transcript.Block) []tool.Result

// answer produces the result blocks for one answer's calls.
func (r *run) answer(ctx context.Context, calls []transcript.Block) ([]transcript.Block, string) {
	var (
		res  []tool.Result
		stop string
	)
	if r.opts.Dispatcher != nil {
		res, stop = r.opts.Dispatcher.Dispatch(ctx, calls, r.runTools)
	} else {
		res = r.runTools(ctx, calls)
	}
	blocks := make([]transcript.Block, len(calls))
	for i, c := range calls {
		var out tool.Result
		if i < len(res) {
			out = res[i]
		} else {
			out = tool.Result{Content: "not run: the dispatcher gave no result for this call", IsError: true}
		}
		blocks[i] = transcript.ToolResultBlock(c.ID, out.Content, out.IsError)
		blocks[i].FileChanges = out.Files
	}
	return blocks, stop
}

// runTools runs calls concurrently and returns their results in the order
// the calls were made.
func (r *run) runTools(ctx context.Context, calls []transcript.Block) []tool.Result {
	if r.opts.Tracker != nil {
		r.opts.Tracker.Turn() // the interlock judges these calls by what the model had seen
	}
	results := make([]tool.Result, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		// The log is a person's terminal: what the model wrote is shown
		// through textfmt.Visible, never as control sequences.
		r.logf("→ %s %s\n", textfmt.VisibleLine(c.Name), textfmt.VisibleLine(textfmt.JSON(c.Input, 200)))
		r.emit(Event{Kind: EventToolStart, Call: &c})
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The time a person took to answer a question about the call
			// is theirs, not the call's.
			ctx, waited := tool.WithWaitMeter(ctx, r.now)
			start := r.now()
			results[i] = r.call(ctx, c)
			took := max(r.now().Sub(start)-waited.Waited(), 0)
			r.logResult(c.Name, results[i], took)
			r.emit(Event{Kind: EventToolDone, Call: &c, Result: &results[i], Took: took})
		}()
	}
	wg.Wait()
	return results
}

// call runs one tool call. Every failure becomes an error result the model
// can read; nothing here ends the run.
func (r *run) call(ctx context.Context, c transcript.Block) tool.Result {
	t, ok := r.opts.Tools.Get(c.Name)
	if !ok {
		return tool.Result{Content: fmt.Sprintf("unknown tool %q (available: %s)", c.Name, strings.Join(r.opts.Tools.Names(), ", ")), IsError: true}
	}
	res, err := t.Run(tool.WithCallID(ctx, c.ID), c.Input)
	switch {
	case err == nil:
		return res
	case ctx.Err() != nil:
		msg := "interrupted: the run was stopped while this call ran"
		if res.Content != "" {
			msg += "\n" + res.Content
		}
		return tool.Result{Content: msg, IsError: true}
	}
	return tool.Result{Content: "the tool failed: " + err.Error(), IsError: true}
}

// noteSkipped says which parts of an answer its client did not keep, so
// nothing the model sent is dropped unsaid.
func (r *run) noteSkipped(skipped map[string]int) {
	if len(skipped) == 0 {
		return
	}
	kinds := make([]string, 0, len(skipped))
	for k := range skipped {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%d %q", skipped[k], k)
	}
	r.logf("note: the answer held content parts that carry no text and are not recorded: %s\n", textfmt.VisibleLine(strings.Join(parts, ", ")))
}

func (r *run) logf(format string, a ...any) {
	if r.opts.Log != nil {
		fmt.Fprintf(r.opts.Log, format, a...)
	}
}

func (r *run) logResult(name string, res tool.Result, d time.Duration) {
	if r.opts.Log == nil {
		return
	}
	if res.IsError {
		first, _, _ := strings.Cut(res.Content, "\n")
		r.logf("  ✗ %s: %s\n", textfmt.VisibleLine(name), textfmt.VisibleLine(textfmt.Clip(first, 160)))
		return
	}
	lines := strings.Count(res.Content, "\n")
	if res.Content != "" && !strings.HasSuffix(res.Content, "\n") {
		lines++
	}
	took := "<1ms"
	if d >= time.Millisecond {
		took = d.Round(time.Millisecond).String()
	}
	r.logf("  ✓ %s: %d bytes, %d %s (%s)\n", textfmt.VisibleLine(name), len(res.Content), lines, map[bool]string{true: "line", false: "lines"}[lines == 1], took)
}
