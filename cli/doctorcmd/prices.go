package doctorcmd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
)

// checkPrices reports the date of the built-in price table and warns when
// it is older than pricing.StaleAfter while some of its prices that are
// not zero are in effect (config.toml does not replace them).
func checkPrices(env *cmdkit.Env, cfg *config.Config) Check {
	return pricesCheck(pricing.Builtin(), cfg, env)
}

func pricesCheck(s *pricing.Sheet, cfg *config.Config, env *cmdkit.Env) Check {
	date := s.Date.Format("2006-01-02")
	days := s.Days(env.Clock.Now())
	inEffect, providers := 0, []string{}
	for prov, models := range s.Table {
		if _, all := cfg.FilePrices[prov][pricing.Wildcard]; all {
			continue // config.toml prices the whole provider
		}
		for model, p := range models {
			if _, own := cfg.FilePrices[prov][model]; own || free(p) {
				continue
			}
			inEffect++
			if !slices.Contains(providers, prov) {
				providers = append(providers, prov)
			}
		}
	}
	slices.Sort(providers)
	c := Check{Name: "prices", Status: OK,
		Detail: fmt.Sprintf("built-in table of %s (%d %s old), %d prices of %s in effect", date, days, textfmt.Plural(days, "day", "days"), inEffect, strings.Join(providers, " and "))}
	switch {
	case inEffect == 0:
		c.Detail = fmt.Sprintf("built-in table of %s: config.toml sets every price it would charge", date)
	case s.Stale(env.Clock.Now()):
		c.Status = Warning
		c.Detail = fmt.Sprintf("built-in table of %s is %d days old (over %d): costs of %s models may be wrong, for prices change",
			date, days, int(pricing.StaleAfter.Hours()/24), strings.Join(providers, " and "))
		c.Fix = `update mecha for a newer table, or set the prices you pay in config.toml: [prices.anthropic."MODEL"] input = ... output = ... (model by model; "*" for all of a provider; mecha config --help)`
	}
	return c
}

// free reports whether a price charges nothing at all.
func free(p pricing.Price) bool {
	zero := func(v *float64) bool { return v == nil || *v == 0 }
	return p.Input == 0 && p.Output == 0 && zero(p.CacheRead) && zero(p.CacheWrite)
}
