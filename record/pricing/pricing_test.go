package pricing

import (
	"math"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
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
	if err := (Table{"a": {"m": {Input: MaxPrice, Output: MaxPrice}}}).Validate(); err != nil {
		t.Errorf("MaxPrice refused: %v", err)
	}
	for _, tc := range []struct {
		p    Price
		want string
	}{
		{Price{Input: -1}, `pricing: prices.a."m".input = -1 is not a price: negative`},
		{Price{Output: math.NaN()}, `pricing: prices.a."m".output = NaN is not a price: not a number`},
		{Price{CacheWrite: f(math.Inf(1))}, `pricing: prices.a."m".cache_write = +Inf is not a price: infinite`},
		{Price{CacheRead: f(1e308)}, `pricing: prices.a."m".cache_read = 1e+308 is not a price: more than 1e+06 USD per million tokens`},
		{Price{Input: math.Nextafter(MaxPrice, math.Inf(1))}, `.input = 1.0000000000000001e+06 is not a price: more than`},
	} {
		err := (Table{"a": {"m": tc.p}}).Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want %q", tc.p, err, tc.want)
		}
	}
}

// TestCostIsAlwaysFinite: no usage at an accepted price overflows, and a
// price Validate refuses has no cost rather than an infinite or NaN one,
// so a cost can always be written as JSON.
func TestCostIsAlwaysFinite(t *testing.T) {
	t.Parallel()
	most := transcript.Usage{InputTokens: math.MaxUint64, OutputTokens: math.MaxUint64, CacheReadTokens: math.MaxUint64, CacheWriteTokens: math.MaxUint64}
	top := Table{"a": {"m": {Input: MaxPrice, Output: MaxPrice}}}
	if c, ok := top.Cost("a", "m", most); !ok || math.IsInf(c, 0) || math.IsNaN(c) {
		t.Errorf("the most usage at MaxPrice: %v, %v", c, ok)
	}
	for _, p := range []Price{{Input: 1e308, Output: 1e308}, {Input: math.Inf(1)}, {Output: math.NaN()}, {CacheRead: f(-1)}} {
		// Built in code, so never validated: Cost must still refuse it.
		if c, ok := (Table{"a": {"m": p}}).Cost("a", "m", most); ok || c != 0 {
			t.Errorf("%+v: cost %v, %v; want no cost", p, c, ok)
		}
	}
}
