package pricing

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// StaleAfter is the age past which the built-in table is old enough that
// "mecha doctor" warns about it: providers change their prices.
const StaleAfter = 120 * 24 * time.Hour

// A Sheet is a dated price table: what each provider's prices were on a
// day, and where they were read.
type Sheet struct {
	// Date is the day the prices were stated for (UTC midnight).
	Date time.Time
	// Sources say where each provider's prices were read, by provider.
	Sources map[string]string
	// Table holds every model under its name and each of its aliases.
	Table Table
	// Models are the models' names (not their aliases) by provider,
	// sorted.
	Models map[string][]string
}

// Days is how many whole days old the sheet is at now.
func (s *Sheet) Days(now time.Time) int { return int(now.Sub(s.Date) / (24 * time.Hour)) }

// Stale reports whether the sheet is more whole days old than StaleAfter
// at now.
func (s *Sheet) Stale(now time.Time) bool { return s.Days(now) > int(StaleAfter/(24*time.Hour)) }

//go:embed prices.toml
var builtinTOML []byte

// Builtin returns the price table mecha ships (prices.toml beside this
// file). It is read once; callers must not change it (Merge copies).
func Builtin() *Sheet { return builtinSheet() }

var builtinSheet = sync.OnceValue(func() *Sheet {
	s, err := ParseSheet(builtinTOML)
	if err != nil {
		panic(err) // TestBuiltin reads it: a build cannot ship a broken one
	}
	return s
})

// sheetFile is the format of prices.toml.
type sheetFile struct {
	Date      toml.LocalDate `toml:"date"`
	Providers map[string]struct {
		Source string `toml:"source"`
		Models map[string]struct {
			Price
			Aliases []string `toml:"aliases"`
		} `toml:"models"`
	} `toml:"providers"`
}

// ParseSheet reads a sheet in the format of prices.toml, strictly: an
// unknown key, a missing date or source, a price Validate refuses and a
// name given twice are errors.
func ParseSheet(data []byte) (*Sheet, error) {
	var f sheetFile
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) && len(sm.Errors) > 0 {
			return nil, fmt.Errorf("pricing: sheet: unknown key %s", strings.Join(sm.Errors[0].Key(), "."))
		}
		return nil, fmt.Errorf("pricing: sheet: %w", err)
	}
	if f.Date == (toml.LocalDate{}) {
		return nil, fmt.Errorf("pricing: sheet: no date")
	}
	s := &Sheet{Date: f.Date.AsTime(time.UTC), Sources: map[string]string{}, Table: Table{}, Models: map[string][]string{}}
	for prov, p := range f.Providers {
		if p.Source == "" {
			return nil, fmt.Errorf("pricing: sheet: providers.%s has no source", prov)
		}
		s.Sources[prov] = p.Source
		s.Table[prov] = map[string]Price{}
		s.Models[prov] = slices.Sorted(maps.Keys(p.Models))
		for model, m := range p.Models {
			for _, name := range append([]string{model}, m.Aliases...) {
				if _, dup := s.Table[prov][name]; dup {
					return nil, fmt.Errorf("pricing: sheet: %s/%s is priced twice", prov, name)
				}
				s.Table[prov][name] = m.Price
			}
		}
	}
	if err := s.Table.Validate(); err != nil {
		return nil, fmt.Errorf("pricing: sheet: %w", err)
	}
	return s, nil
}

// Merge returns base with over's prices over it, in a new table: over
// wins model by model, and a provider's Wildcard in over replaces every
// model of that provider in base (it prices all the models over does not
// name, which base must not price otherwise). Neither table is changed.
func Merge(base, over Table) Table {
	out := make(Table, len(base)+len(over))
	for prov, models := range base {
		if _, all := over[prov][Wildcard]; all {
			continue
		}
		out[prov] = maps.Clone(models)
	}
	for prov, models := range over {
		if out[prov] == nil {
			out[prov] = map[string]Price{}
		}
		maps.Copy(out[prov], models)
	}
	return out
}
