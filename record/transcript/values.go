package transcript

import (
	"encoding/json"
	"slices"
)

// StringValues calls fn with each string value of the JSON document raw,
// at any depth, an object's values in the order of its sorted keys, never
// the keys themselves: the text of a tool call's arguments or result as
// search reads it and as the interlock looks for hosts in it. An empty or
// malformed document has none.
func StringValues(raw json.RawMessage, fn func(string)) {
	if len(raw) == 0 {
		return
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			fn(v)
		case []any:
			for _, e := range v {
				walk(e)
			}
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				walk(v[k])
			}
		}
	}
	walk(v)
}
