package pricing

import (
	"fmt"
	"math"

	"github.com/mecha-agent/mecha/transcript"
)

// Price is USD per million tokens. Cache prices that are not configured
// (nil) are charged at the input price: an estimate that errs towards
// what uncached input would cost rather than towards nothing.
type Price struct {
	Input      float64  `toml:"input" json:"input"`
	Output     float64  `toml:"output" json:"output"`
	CacheRead  *float64 `toml:"cache_read" json:"cache_read,omitempty"`
	CacheWrite *float64 `toml:"cache_write" json:"cache_write,omitempty"`
}

// Cost returns the USD cost of a usage at this price.
func (p Price) Cost(u transcript.Usage) float64 {
	cr, cw := p.Input, p.Input
	if p.CacheRead != nil {
		cr = *p.CacheRead
	}
	if p.CacheWrite != nil {
		cw = *p.CacheWrite
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*cr + float64(u.CacheWriteTokens)*cw) / 1e6
}

// Validate rejects negative and non-finite prices.
func (p Price) Validate() error {
	vals := map[string]*float64{"input": &p.Input, "output": &p.Output, "cache_read": p.CacheRead, "cache_write": p.CacheWrite}
	for _, name := range []string{"input", "output", "cache_read", "cache_write"} {
		v := vals[name]
		if v != nil && (*v < 0 || math.IsNaN(*v) || math.IsInf(*v, 0)) {
			return fmt.Errorf("%s = %v is not a price", name, *v)
		}
	}
	return nil
}

// Wildcard is the model name that prices every model of a provider that
// has no entry of its own, e.g. [prices.local."*"] for free local models.
const Wildcard = "*"

// Table maps provider, then model, to a price.
type Table map[string]map[string]Price

// Lookup returns the price of a provider's model, falling back to the
// provider's wildcard entry.
func (t Table) Lookup(provider, model string) (Price, bool) {
	models, ok := t[provider]
	if !ok {
		return Price{}, false
	}
	if p, ok := models[model]; ok {
		return p, true
	}
	p, ok := models[Wildcard]
	return p, ok
}

// Cost prices a usage, with ok=false when the model has no price.
func (t Table) Cost(provider, model string, u transcript.Usage) (usd float64, ok bool) {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return 0, false
	}
	return p.Cost(u), true
}

// Validate checks every price in the table.
func (t Table) Validate() error {
	for prov, models := range t {
		for model, p := range models {
			if err := p.Validate(); err != nil {
				return fmt.Errorf("pricing: prices.%s.%q: %w", prov, model, err)
			}
		}
	}
	return nil
}
