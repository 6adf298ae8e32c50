package agent

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Ledger counts what a run and the child runs it starts (subagents) spend,
// so that a child's budgets are carved out of what the run has left and
// what a child spent counts against the run's budgets. A run given a
// Ledger (Options.Ledger) adds each of its own model calls to it and
// judges its budgets by the ledger's totals. Safe for concurrent use; the
// zero value is empty.
type Ledger struct {
	mu    sync.Mutex
	turns int
	usage transcript.Usage
	// held is what running children may still spend: carved out and not
	// yet given back, so that two children started together cannot both
	// be given the whole of what is left.
	held Budget
}

// Budget is what a child run may spend: its turns (0: no limit), output
// tokens and cost (nil: no limit).
type Budget struct {
	Turns        int
	OutputTokens *uint64
	CostUSD      *float64
}

// Spent returns the model calls and usage counted so far, the run's own
// and its children's.
func (l *Ledger) Spent() (int, transcript.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.turns, l.usage
}

func (l *Ledger) add(turns int, u transcript.Usage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.turns = satAdd(l.turns, turns)
	l.usage = l.usage.Add(u)
}

func satAdd(a, b int) int {
	if b > 0 && a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// ErrNoBudgetLeft is wrapped by Carve's error when the run has nothing
// left of a budget to give a child.
var ErrNoBudgetLeft = errors.New("no budget left")

// Carve gives a child run its budgets: what it asks for (want), never more
// than the run configured by cfg has left once what was spent and what
// other running children hold are taken off. A limit the run does not have
// passes want's through. The carved budgets are held until the returned
// Hold is done. Cost is counted at cfg's model's price (a child runs on
// the run's model).
func (l *Ledger) Carve(cfg transcript.Config, prices pricing.Table, want Budget) (Budget, *Hold, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	got := want
	if cfg.MaxTurns > 0 {
		left := cfg.MaxTurns - l.turns - l.held.Turns
		if left <= 0 {
			return Budget{}, nil, fmt.Errorf("%w: the run has used its %d turns", ErrNoBudgetLeft, cfg.MaxTurns)
		}
		if got.Turns <= 0 || got.Turns > left {
			got.Turns = left
		}
	}
	if m := cfg.MaxOutputTokens; m != nil {
		var held uint64
		if l.held.OutputTokens != nil {
			held = *l.held.OutputTokens
		}
		if l.usage.OutputTokens+held >= *m {
			return Budget{}, nil, fmt.Errorf("%w: the run has used its %d output tokens", ErrNoBudgetLeft, *m)
		}
		left := *m - l.usage.OutputTokens - held
		if got.OutputTokens == nil || *got.OutputTokens > left {
			got.OutputTokens = &left
		}
	}
	if m := cfg.MaxCostUSD; m != nil {
		cost, ok := prices.Cost(cfg.Provider, cfg.Model, l.usage)
		if !ok {
			return Budget{}, nil, fmt.Errorf("%w: %s/%s has no price", ErrCostBudgetUnpriced, cfg.Provider, cfg.Model)
		}
		if l.held.CostUSD != nil {
			cost += *l.held.CostUSD
		}
		if cost >= *m {
			return Budget{}, nil, fmt.Errorf("%w: the run has used its $%g", ErrNoBudgetLeft, *m)
		}
		left := *m - cost
		if got.CostUSD == nil || *got.CostUSD > left {
			got.CostUSD = &left
		}
	}
	l.held = l.held.plus(got, 1)
	return got, &Hold{l: l, b: got}, nil
}

// plus adds (sign 1) or takes off (sign -1) b's limits.
func (b Budget) plus(o Budget, sign int) Budget {
	b.Turns += sign * o.Turns
	if o.OutputTokens != nil {
		var v uint64
		if b.OutputTokens != nil {
			v = *b.OutputTokens
		}
		if sign > 0 {
			v += *o.OutputTokens
		} else {
			v -= min(v, *o.OutputTokens)
		}
		b.OutputTokens = &v
	}
	if o.CostUSD != nil {
		var v float64
		if b.CostUSD != nil {
			v = *b.CostUSD
		}
		v = max(0, v+float64(sign)**o.CostUSD)
		b.CostUSD = &v
	}
	return b
}

// Hold is a child's carved budget, held until the child is done.
type Hold struct {
	l    *Ledger
	b    Budget
	once sync.Once
}

// Done counts what the child spent against the run and gives back the
// rest of what it held. Calling it again does nothing.
func (h *Hold) Done(turns int, u transcript.Usage) {
	h.once.Do(func() {
		h.l.mu.Lock()
		h.l.held = h.l.held.plus(h.b, -1)
		h.l.mu.Unlock()
		h.l.add(turns, u)
	})
}
