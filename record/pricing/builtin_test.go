package pricing

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestBuiltin: the shipped table parses, is dated, names a source for
// every provider, prices the providers' default models, and local and
// mock at 0.
func TestBuiltin(t *testing.T) {
	t.Parallel()
	s := Builtin()
	if s.Date.IsZero() || s.Date.After(time.Now()) {
		t.Errorf("date %v", s.Date)
	}
	for _, prov := range []string{"anthropic", "openai", "local", "mock"} {
		if !strings.Contains(s.Sources[prov], " ") {
			t.Errorf("%s: source %q", prov, s.Sources[prov])
		}
	}
	u := transcript.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadTokens: 1_000_000, CacheWriteTokens: 1_000_000}
	tests := []struct {
		prov, model string
		want        float64
	}{
		{"anthropic", "claude-sonnet-4-5", 3 + 15 + 0.3 + 3.75},
		{"anthropic", "claude-sonnet-4-5-20250929", 3 + 15 + 0.3 + 3.75}, // an alias
		{"anthropic", "claude-opus-4-5", 5 + 25 + 0.5 + 6.25},
		{"anthropic", "claude-haiku-4-5", 1 + 5 + 0.1 + 1.25},
		{"openai", "gpt-5-mini", 0.25 + 2 + 0.025 + 0.25}, // no cache write price: the input's
		{"openai", "gpt-5", 1.25 + 10 + 0.125 + 1.25},
		{"local", "qwen3", 0},
		{"mock", "mock-1", 0},
	}
	for _, tt := range tests {
		got, ok := s.Table.Cost(tt.prov, tt.model, u)
		if !ok || math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s/%s: %v, %v; want %v", tt.prov, tt.model, got, ok, tt.want)
		}
	}
	if _, ok := s.Table.Lookup("anthropic", "claude-unknown"); ok {
		t.Error("an unknown model is priced")
	}
}

func TestStale(t *testing.T) {
	t.Parallel()
	s := &Sheet{Date: time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)}
	for _, tt := range []struct {
		now   time.Time
		stale bool
	}{
		{time.Date(2026, 1, 11, 0, 0, 0, 0, time.UTC), false},
		{time.Date(2026, 5, 10, 23, 59, 0, 0, time.UTC), false}, // 120 days
		{time.Date(2026, 5, 11, 0, 0, 0, 0, time.UTC), true},
	} {
		if got := s.Stale(tt.now); got != tt.stale {
			t.Errorf("Stale(%v) = %v", tt.now, got)
		}
	}
}

func TestParseSheet(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, toml, want string }{
		{"no date", "[providers.a]\nsource = \"x y\"\n", "no date"},
		{"no source", "date = 2026-01-01\n[providers.a.models.m]\ninput = 1\n", "providers.a has no source"},
		{"unknown key", "date = 2026-01-01\n[providers.a]\nsource = \"s\"\nsauce = 1\n", "sauce"},
		{"twice", "date = 2026-01-01\n[providers.a]\nsource = \"s\"\n[providers.a.models.m]\naliases = [\"n\"]\n[providers.a.models.n]\n", "a/n is priced twice"},
		{"bad price", "date = 2026-01-01\n[providers.a]\nsource = \"s\"\n[providers.a.models.m]\ninput = -1\n", "input = -1 is not a price"},
	} {
		if _, err := ParseSheet([]byte(tc.toml)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestMerge: config.toml's prices win model by model; its wildcard for a
// provider replaces the base's models of that provider.
func TestMerge(t *testing.T) {
	t.Parallel()
	base := Table{
		"anthropic": {"opus": {Input: 15, Output: 75}, "sonnet": {Input: 3, Output: 15}},
		"local":     {Wildcard: {}},
		"openai":    {"gpt": {Input: 1, Output: 2}},
	}
	over := Table{
		"anthropic": {"sonnet": {Input: 1, Output: 1}, "new": {Input: 9, Output: 9}},
		"openai":    {Wildcard: {Input: 7, Output: 7}},
	}
	m := Merge(base, over)
	for _, tt := range []struct {
		prov, model string
		want        float64 // input price; -1 for none
	}{
		{"anthropic", "opus", 15},  // the base's
		{"anthropic", "sonnet", 1}, // config's, over the base's
		{"anthropic", "new", 9},    // config's alone
		{"openai", "gpt", 7},       // config's wildcard replaces the base's models
		{"openai", "other", 7},
		{"local", "qwen", 0},
		{"mock", "mock-1", -1},
	} {
		p, ok := m.Lookup(tt.prov, tt.model)
		if got := map[bool]float64{true: p.Input, false: -1}[ok]; got != tt.want {
			t.Errorf("%s/%s: input %v, want %v", tt.prov, tt.model, got, tt.want)
		}
	}
	if base["anthropic"]["sonnet"].Input != 3 || len(base["openai"]) != 1 || len(over["anthropic"]) != 2 {
		t.Error("Merge changed a table it was given")
	}
	if got := Merge(base, nil); len(got) != 3 || &got == &base {
		t.Errorf("Merge(base, nil) = %v", got)
	}
}
