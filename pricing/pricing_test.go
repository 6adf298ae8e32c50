package pricing

import (
	"math"
	"testing"

	"github.com/mecha-agent/mecha/transcript"
)

func f(v float64) *float64 { return &v }

func TestCost(t *testing.T) {
	t.Parallel()
	table := Table{
		"anthropic": {"claude-opus-5": {Input: 15, Output: 75, CacheRead: f(1.5), CacheWrite: f(18.75)}},
		"openai":    {"gpt": {Input: 1, Output: 2}},
		"local":     {Wildcard: {}},
	}
	u := transcript.Usage{InputTokens: 1_000_000, OutputTokens: 100_000, CacheReadTokens: 2_000_000, CacheWriteTokens: 400_000}
	tests := []struct {
		prov, model string
		want        float64
		ok          bool
	}{
		{"anthropic", "claude-opus-5", 15 + 7.5 + 3 + 7.5, true},
		{"openai", "gpt", 1 + 0.2 + 2 + 0.4, true}, // cache tokens at the input price
		{"local", "anything", 0, true},
		{"anthropic", "other", 0, false},
		{"mock", "mock-1", 0, false},
	}
	for _, tt := range tests {
		got, ok := table.Cost(tt.prov, tt.model, u)
		if ok != tt.ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("Cost(%s, %s) = %v, %v; want %v, %v", tt.prov, tt.model, got, ok, tt.want, tt.ok)
		}
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	if err := (Table{"a": {"m": {Input: 1, CacheRead: f(0)}}}).Validate(); err != nil {
		t.Error(err)
	}
	for _, p := range []Price{{Input: -1}, {Output: math.NaN()}, {CacheWrite: f(math.Inf(1))}} {
		if err := (Table{"a": {"m": p}}).Validate(); err == nil {
			t.Errorf("%+v accepted", p)
		}
	}
}
