package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/tool"
	"github.com/mecha-agent/mecha/transcript"
)

// runTools runs one answer's calls concurrently and returns their results
// in the order the calls were made, each matched to its call by id.
func (r *run) runTools(ctx context.Context, calls []transcript.Block) []transcript.Block {
	results := make([]transcript.Block, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		r.logf("→ %s %s\n", c.Name, clipJSON(c.Input, 200))
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			res := r.call(ctx, c)
			results[i] = transcript.ToolResultBlock(c.ID, res.Content, res.IsError)
			r.logResult(c.Name, res, time.Since(start))
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
	res, err := t.Run(ctx, c.Input)
	if err != nil {
		if ctx.Err() != nil {
			msg := "interrupted: the run was stopped while this call ran"
			if res.Content != "" {
				msg += "\n" + res.Content
			}
			return tool.Result{Content: msg, IsError: true}
		}
		return tool.Result{Content: "the tool failed: " + err.Error(), IsError: true}
	}
	return res
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
		r.logf("  ✗ %s: %s\n", name, clip(first, 160))
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
	r.logf("  ✓ %s: %d bytes, %d %s (%s)\n", name, len(res.Content), lines, map[bool]string{true: "line", false: "lines"}[lines == 1], took)
}

func clipJSON(raw json.RawMessage, n int) string {
	var v any
	if json.Unmarshal(raw, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			raw = b
		}
	}
	return clip(string(raw), n)
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
