package replay

import (
	"context"
	"fmt"
	"io"
	"sort"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Mode is what a replay does at a structural divergence.
type Mode string

// Modes of --on-divergence.
const (
	// ModeStop ends the replay at the first structural divergence: after it,
	// every recorded result would answer a question nobody asked.
	ModeStop Mode = "stop"
	// ModeError stops the same way; the caller also fails on any
	// divergence, argument spellings included.
	ModeError Mode = "error"
	// ModeLive abandons the recording at the first structural divergence
	// and carries on against the real tools, under the permission mode.
	ModeLive Mode = "live"
)

// ParseMode parses the name of a mode; "" is ModeStop.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeStop, ModeError, ModeLive:
		return m, nil
	case "":
		return ModeStop, nil
	}
	return "", fmt.Errorf("replay: the divergence mode must be stop, error or live, not %q", s)
}

// NoRecordedResult answers, in a replay, a recorded call whose result was
// never recorded (the recorded run died first): the replay has nothing to
// give back, and runs nothing.
const NoRecordedResult = "replay: the recording has no result for this call (the recorded run ended before its result was recorded); nothing was run"

// StopDiverged is the stop reason of a replay run ended by a divergence.
const StopDiverged = "diverged"

// dispatcher answers tool calls from the recording, comparing each with the
// recorded call at its position. It sees an answer's calls together and in
// order, so the comparison does not depend on which call finishes first.
type dispatcher struct {
	mode Mode
	log  io.Writer
	// The turn being replayed.
	turn     int    // from 1
	recorded []Call // the turn's recorded calls
	base     int    // index of the turn's first call in the session
	next     int    // position in recorded of the next call
	// tracker is the turn's: a recorded result given back brings the
	// recording's taint at that call into the conversation, so that a
	// live call after it is judged as the recorded run would have been.
	tracker *tool.Tracker
	// tools are the turn's tools: a call answered from the recording
	// before untrusted content came in counts as reached by them
	// (Tracker.Reached), as the run's tracker counted it.
	tools *tool.Registry
	// live is set once the recording has been abandoned (live mode).
	live        bool
	divergences []Divergence
	made        []Step // every call the replay's model made, in order
	replayed    int    // calls answered from the recording
	ran         int    // calls run for real
}

func (d *dispatcher) beginTurn(turn, base int, calls []Call, tracker *tool.Tracker, tools *tool.Registry) {
	d.turn, d.base, d.recorded, d.next, d.tracker, d.tools = turn, base, calls, 0, tracker, tools
}

func (d *dispatcher) diverge(div Divergence) {
	div.Turn = d.turn
	div.Structural = IsStructural(div.Kind)
	d.divergences = append(d.divergences, div)
}

// Dispatch implements agent.Dispatcher.
func (d *dispatcher) Dispatch(ctx context.Context, calls []transcript.Block, run agent.RunFunc) ([]tool.Result, string) {
	out := make([]tool.Result, len(calls))
	var (
		live    []transcript.Block
		at      []int
		stop    string
		brought recordedTaint
	)
	for i, c := range calls {
		d.made = append(d.made, Step{Turn: d.turn, Index: len(d.made), Name: c.Name, Input: c.Input, Live: d.live})
		if d.live {
			live, at = append(live, c), append(at, i)
			continue
		}
		pos := d.next
		d.next++
		var div *Divergence
		if pos >= len(d.recorded) {
			div = &Divergence{Kind: KindExtra, Actual: &CallRef{c.Name, c.Input}}
		} else {
			div = Compare(d.recorded[pos], c.Name, c.Input)
		}
		if div != nil {
			div.Index = d.base + pos
			d.diverge(*div)
			if IsStructural(div.Kind) {
				if d.mode == ModeLive {
					d.live = true
					d.made[len(d.made)-1].Live = true
					fmt.Fprintf(d.log, "↯ call %d departs from the recording (%s): going on against the real tools\n", div.Index, div.Kind)
					live, at = append(live, c), append(at, i)
					continue
				}
				out[i] = tool.Result{Content: "replay: this call departs from the recording, so the replay stops here and nothing is run", IsError: true}
				stop = StopDiverged
				continue
			}
		}
		rec := d.recorded[pos]
		d.replayed++
		fmt.Fprintf(d.log, "↺ %s %s (recorded result)\n", textfmt.VisibleLine(c.Name), textfmt.VisibleLine(textfmt.JSON(c.Input, 200)))
		if !rec.HasResult {
			out[i] = tool.Result{Content: NoRecordedResult, IsError: true}
			continue
		}
		out[i] = tool.Result{Content: rec.Result, IsError: rec.IsError}
		brought.add(rec, d.base+pos)
		if t, ok := d.lookup(c.Name); ok && d.tracker != nil {
			d.tracker.Reached(t, c.Input)
		}
	}
	if len(live) > 0 {
		d.ran += len(live)
		for j, r := range run(ctx, live) {
			out[at[j]] = r
		}
	}
	// Counted after the live calls of the same answer ran: calls made
	// together were chosen before any of their results were seen.
	brought.into(d.tracker)
	return out, stop
}

// recordedTaint is the taint the recorded results given back for one
// answer bring in, and the first call that brought each part.
type recordedTaint struct {
	taint                  transcript.Taint
	privateBy, untrustedBy string
}

func (b *recordedTaint) add(c Call, index int) {
	why := fmt.Sprintf("the recording, replayed up to call #%d (%s)", index, c.Name)
	if c.Taint.Private && !b.taint.Private {
		b.privateBy = why
	}
	if c.Taint.Untrusted && !b.taint.Untrusted {
		b.untrustedBy = why
	}
	b.taint = b.taint.Merge(c.Taint)
}

func (b *recordedTaint) into(tr *tool.Tracker) {
	if tr != nil && !b.taint.Clean() {
		tr.Absorb(b.taint, b.privateBy, b.untrustedBy, "")
	}
}

// endTurn reports the recorded calls of the turn the replay did not make.
// It returns true when any were missing.
func (d *dispatcher) endTurn() bool {
	if d.live || d.next >= len(d.recorded) {
		return false
	}
	for pos := d.next; pos < len(d.recorded); pos++ {
		c := d.recorded[pos]
		d.diverge(Divergence{Kind: KindMissing, Index: d.base + pos, Expected: &CallRef{c.Name, c.Input}})
	}
	if d.mode == ModeLive {
		d.live = true
	}
	return true
}

// sorted returns the divergences in the order of the session's calls.
func (d *dispatcher) sorted() []Divergence {
	out := append(make([]Divergence, 0, len(d.divergences)), d.divergences...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// lookup is the turn's tool of that name, if it has one.
func (d *dispatcher) lookup(name string) (tool.Tool, bool) {
	if d.tools == nil {
		return nil, false
	}
	return d.tools.Get(name)
}
