package regresscmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// settings are the attach settings of each suite run: one per model, or
// the flags as given.
func (r *runner) settings() []harness.Settings {
	if len(r.opts.Models) < 2 {
		return []harness.Settings{r.opts.Attach}
	}
	var out []harness.Settings
	for _, m := range r.opts.Models {
		set := r.opts.Attach
		set.Model = m
		out = append(out, set)
	}
	return out
}

// writeReports writes the suites: the JUnit and HTML files asked for,
// then JSON or the table (one suite's, or the models side by side).
func writeReports(opts *RegressOptions, sums []regressSummary) error {
	if opts.JUnit != "" {
		if err := writeJUnit(opts.JUnit, sums); err != nil {
			return err
		}
	}
	if opts.HTML != "" {
		if err := writeHTMLFile(opts.HTML, sums); err != nil {
			return err
		}
	}
	if opts.InspectLog != "" {
		if err := writeInspect(opts.Env, opts.InspectLog, sums); err != nil {
			return err
		}
	}
	compare := len(opts.Models) > 1
	switch {
	case opts.JSON && compare:
		return cmdkit.WriteJSON(opts.Env.Out, struct {
			Models []regressSummary `json:"models"`
		}{sums})
	case opts.JSON:
		return cmdkit.WriteJSON(opts.Env.Out, sums[0])
	case compare:
		printComparison(opts.Env.Out, cmdkit.NewStyle(opts.Env), sums)
	default:
		printRegress(opts.Env.Out, cmdkit.NewStyle(opts.Env), sums[0])
	}
	return nil
}

// verdict fails the command when a pin did not replay clean in every run,
// on any model.
func verdict(sums []regressSummary) error {
	var bad []string
	for _, sum := range sums {
		n := sum.bad()
		if n == 0 {
			continue
		}
		msg := fmt.Sprintf("%d of %d pinned %s did not replay clean", n, sum.Pins, textfmt.Plural(sum.Pins, "session", "sessions"))
		if len(sums) > 1 {
			msg = "on " + modelName(sum) + ", " + msg
		}
		bad = append(bad, msg)
	}
	if len(bad) == 0 {
		return nil
	}
	return &cmdkit.DivergedError{Msg: "regress: " + strings.Join(bad, "; ")}
}

// runner runs the suite: each pin through one replay door, K times.
type runner struct {
	opts    *RegressOptions
	mode    replay.Mode
	ids     []string
	checked bool // the local server's slots were checked
}

// suite replays every pin against the attach settings set (-p and -m).
func (r *runner) suite(ctx context.Context, set harness.Settings) (regressSummary, error) {
	env := r.opts.Env
	sum := regressSummary{Model: set.Model, Provider: set.Provider, Pins: len(r.ids), Repeat: r.opts.Repeat,
		Shard: r.opts.Shard, Results: []pinResult{}, Divergences: map[string]int{}, CostUSD: new(float64)}
	start := env.Clock.Now()
	for i, id := range r.ids {
		progress := fmt.Sprintf("[%d/%d] replaying %s", i+1, len(r.ids), id)
		if len(r.opts.Models) > 1 {
			progress += " on " + set.Model
		}
		p, err := r.pin(ctx, set, id, progress)
		if err != nil {
			return sum, err
		}
		sum.add(p)
	}
	if env.OutTTY && !r.opts.JSON && len(r.ids) > 0 {
		fmt.Fprint(env.Err, "\r\x1b[K")
	}
	sum.Seconds = env.Clock.Now().Sub(start).Seconds()
	sum.rates()
	return sum, nil
}

// pin replays one pin K times through one door. The error is one that
// stops the whole suite (an interrupt, a local server with several
// slots); any other is the pin's.
func (r *runner) pin(ctx context.Context, set harness.Settings, id, progress string) (pinResult, error) {
	env, k := r.opts.Env, r.opts.Repeat
	p := pinResult{ID: id}
	start := env.Clock.Now()
	err := r.runs(ctx, set, &p, progress)
	p.Time = env.Clock.Now().Sub(start).Seconds()
	switch {
	case errors.Is(err, context.Canceled):
		return p, &cmdkit.InterruptedError{Msg: "interrupted"}
	case errors.Is(err, errSlots):
		return p, err
	case p.Report != nil && p.Report.Status == replay.StatusRefused:
		p.Status, p.Error, p.Runs = statusRefused, textfmt.OneLine(err.Error()), 0
		p.Reports = nil
	case err != nil:
		p.Status, p.Error = statusFailed, textfmt.OneLine(err.Error())
	}
	p.settle(k)
	return p, nil
}

// runs opens the pin's door and replays it until K runs are done or one
// fails.
func (r *runner) runs(ctx context.Context, set harness.Settings, p *pinResult, progress string) error {
	env, k := r.opts.Env, r.opts.Repeat
	s, _, err := env.LoadSession(p.ID)
	if err != nil {
		return err
	}
	p.ID, p.Title = s.Meta.ID, s.Meta.Title
	d, err := replaycmd.Open(ctx, env, s, replaycmd.Settings{Attach: set, Mode: r.mode, Record: !r.opts.NoSession, Quiet: true})
	if err != nil {
		return err
	}
	defer d.Close()
	local := func(t replay.Target) bool { return t.Provider == openai.NameLocal }
	if slices.ContainsFunc(d.ReplayTargets(), local) && !r.checked && !r.opts.SkipSlotCheck {
		if err := checkSlots(ctx, env); err != nil {
			return err
		}
		r.checked = true
	}
	for n := 1; n <= k; n++ {
		if env.OutTTY && !r.opts.JSON {
			line := progress
			if k > 1 {
				line += fmt.Sprintf(" (run %d/%d)", n, k)
			}
			fmt.Fprintf(env.Err, "\r\x1b[K%s", line)
		}
		rep, err := d.Replay(ctx, io.Discard)
		if rep != nil && rep.Status == replay.StatusRefused {
			p.Report = rep
			return err
		}
		if err != nil {
			return err
		}
		p.add(rep, fails(r.mode, rep))
	}
	return nil
}
