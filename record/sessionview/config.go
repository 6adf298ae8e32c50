package sessionview

import (
	"bytes"
	"encoding/json"
	"reflect"
	"sort"

	"github.com/mecha-agent/mecha/record/transcript"
)

// configFields returns a config's fields by JSON name, without "record"
// and "at", with numbers as json.Number (a seed does not fit a float64).
func configFields(c *transcript.Config) map[string]any {
	line, _ := transcript.Encode(c)
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	dec.Decode(&m)
	delete(m, "at")
	delete(m, "record")
	return m
}

// changes returns the settings that differ from prev to c, by field name.
func changes(prev, c *transcript.Config) []Change {
	a, b := configFields(prev), configFields(c)
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []Change
	for _, k := range keys {
		if !reflect.DeepEqual(a[k], b[k]) {
			out = append(out, Change{Field: k, From: a[k], To: b[k]})
		}
	}
	return out
}

// ConfigFields returns a config's settings by JSON field name (without
// "record" and "at"), numbers as json.Number: the fields Change names.
func ConfigFields(c *transcript.Config) map[string]any { return configFields(c) }
