package pricing

import (
	"fmt"
	"math"

	"github.com/mecha-agent/mecha/record/transcript"
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

// MaxPrice is the highest price Validate accepts, in USD per million
// tokens: a dollar a token, far above any model's. Below it, no usage a
// transcript can count (four uint64 token counts) costs 1e20 USD or more,
// so a cost is always a finite number that JSON can carry.
const MaxPrice = 1e6

// Cost returns the USD cost of a usage at this price, with ok=false when
// the price is one Validate refuses: such a price has no cost, rather
// than an infinite or NaN one.
func (p Price) Cost(u transcript.Usage) (usd float64, ok bool) {
	if p.Validate() != nil {
		return 0, false
	}
	cr, cw := p.Input, p.Input
	if p.CacheRead != nil {
		cr = *p.CacheRead
	}
	if p.CacheWrite != nil {
		cw = *p.CacheWrite
	}
	return (float64(u.InputTokens)*p.Input + float64(u.OutputTokens)*p.Output +
		float64(u.CacheReadTokens)*cr + float64(u.CacheWriteTokens)*cw) / 1e6, true
}

// Validate rejects a price that is negative, not a number, infinite or
// above MaxPrice, naming the field and why.
func (p Price) Validate() error {
	fields := []struct {
		name string
		v    *float64
	}{{"input", &p.Input}, {"output", &p.Output}, {"cache_read", p.CacheRead}, {"cache_write", p.CacheWrite}}
	for _, f := range fields {
		if f.v == nil {
			continue
		}
		var why string
		switch v := *f.v; {
		case math.IsNaN(v):
			why = "not a number"
		case math.IsInf(v, 0):
			why = "infinite"
		case v < 0:
			why = "negative"
		case v > MaxPrice:
			why = fmt.Sprintf("more than %g USD per million tokens (a dollar a token)", float64(MaxPrice))
		default:
			continue
		}
		return fmt.Errorf("%s = %v is not a price: %s", f.name, *f.v, why)
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

// Cost prices a usage, with ok=false when the model has no price or one
// that Validate refuses.
func (t Table) Cost(provider, model string, u transcript.Usage) (usd float64, ok bool) {
	p, ok := t.Lookup(provider, model)
	if !ok {
		return 0, false
	}
	return p.Cost(u)
}

// Validate checks every price in the table.
func (t Table) Validate() error {
	for prov, models := range t {
		for model, p := range models {
			if err := p.Validate(); err != nil {
				return fmt.Errorf("pricing: prices.%s.%q.%w", prov, model, err)
			}
		}
	}
	return nil
}
