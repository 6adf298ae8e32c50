package agent

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/transcript"
)

func TestCarveNeverGivesMoreThanIsLeft(t *testing.T) {
	out, cost := uint64(100), 1.0
	cfg := transcript.Config{Provider: "p", Model: "m", MaxTurns: 10, MaxOutputTokens: &out, MaxCostUSD: &cost}
	var l Ledger
	l.add(4, transcript.Usage{OutputTokens: 40})
	// Unpriced model with a cost budget: refused.
	if _, _, err := l.Carve(cfg, nil, Budget{}); !errors.Is(err, ErrCostBudgetUnpriced) {
		t.Fatalf("carve of an unpriced cost budget: %v", err)
	}
	cfg.MaxCostUSD = nil
	want := uint64(1000)
	b, h1, err := l.Carve(cfg, nil, Budget{Turns: 50, OutputTokens: &want})
	if err != nil || b.Turns != 6 || *b.OutputTokens != 60 {
		t.Fatalf("first carve %+v, %v; want 6 turns and 60 tokens", b, err)
	}
	// A second child started while the first runs gets nothing: the first
	// holds all that is left.
	if _, _, err := l.Carve(cfg, nil, Budget{}); !errors.Is(err, ErrNoBudgetLeft) {
		t.Fatalf("second carve while the first holds everything: %v", err)
	}
	h1.Done(2, transcript.Usage{OutputTokens: 10})
	h1.Done(2, transcript.Usage{OutputTokens: 10}) // twice: counted once
	b, _, err = l.Carve(cfg, nil, Budget{Turns: 2})
	if err != nil || b.Turns != 2 || *b.OutputTokens != 50 {
		t.Fatalf("carve after the first gave back: %+v, %v; want 2 turns and 50 tokens", b, err)
	}
	if n, u := l.Spent(); n != 6 || u.OutputTokens != 50 {
		t.Errorf("spent %d turns, %d tokens; want 6 and 50", n, u.OutputTokens)
	}
}

// spender stands for a subagent: running it spends from the ledger.
type spender struct {
	l     *Ledger
	turns int
	usage transcript.Usage
}

func (s *spender) Spec() tool.Spec {
	return tool.Spec{Name: "agent", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (s *spender) Capabilities() tool.Capabilities { return tool.Capabilities{} }
func (s *spender) Run(context.Context, json.RawMessage) (tool.Result, error) {
	s.l.add(s.turns, s.usage)
	return tool.Result{Content: "child done"}, nil
}

func TestWhatChildrenSpendCountsAgainstTheRunsBudgets(t *testing.T) {
	for _, tc := range []struct {
		name     string
		cfg      func(*transcript.Config)
		child    spender
		withLdgr bool
		stop     string
		requests int
	}{
		{"turns", func(c *transcript.Config) { c.MaxTurns = 4 }, spender{turns: 3}, true, StopMaxTurns, 1},
		{"output tokens", func(c *transcript.Config) { o := uint64(100); c.MaxOutputTokens = &o }, spender{turns: 1, usage: u(0, 200)}, true, StopMaxOutputTokens, 1},
		// Control: without a ledger the children's spending is not seen.
		{"control", func(c *transcript.Config) { c.MaxTurns = 4 }, spender{turns: 3}, false, StopEndTurn, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
				calls(u(1, 1), use("c1", "agent", `{}`)), answer("done", u(1, 1))}}
			cfg := transcript.Config{MaxTurns: 50}
			tc.cfg(&cfg)
			l := &Ledger{}
			child := tc.child
			child.l = l
			opts, _ := setup(t, p, cfg, &child)
			if tc.withLdgr {
				opts.Ledger = l
			}
			res, err := Run(context.Background(), opts, "go")
			if err != nil || res.StopReason != tc.stop || len(p.reqs) != tc.requests {
				t.Errorf("stop %q after %d requests (%v); want %q after %d", res.StopReason, len(p.reqs), err, tc.stop, tc.requests)
			}
			if res.Turns != 1 && tc.withLdgr {
				t.Errorf("the summary counts %d turns; want the run's own, 1", res.Turns)
			}
		})
	}
}

func TestCarveCost(t *testing.T) {
	cost := 1.0
	cfg := transcript.Config{Provider: "p", Model: "m", MaxCostUSD: &cost}
	// $1 per million output tokens: 400,000 spent is $0.40.
	prices := pricing.Table{"p": {"m": {Output: 1}}}
	var l Ledger
	l.add(1, transcript.Usage{OutputTokens: 400_000})
	want := 5.0
	b, h, err := l.Carve(cfg, prices, Budget{CostUSD: &want})
	if err != nil || b.CostUSD == nil || *b.CostUSD < 0.5999 || *b.CostUSD > 0.6001 {
		t.Fatalf("carve %+v, %v; want $0.60", b, err)
	}
	h.Done(1, transcript.Usage{OutputTokens: 600_000})
	if _, _, err := l.Carve(cfg, prices, Budget{}); !errors.Is(err, ErrNoBudgetLeft) {
		t.Errorf("carve with the dollar spent: %v", err)
	}
}
