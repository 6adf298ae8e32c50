package replay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// Divergence kinds.
const (
	KindTool      = "tool"      // a different tool at that position
	KindArguments = "arguments" // the same tool with different arguments
	KindExtra     = "extra"     // the replay called past the recording
	KindMissing   = "missing"   // the replay stopped before a recorded call
)

// CallRef names a call in a report.
type CallRef struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// Divergence is one place where the replay departs from the recording.
type Divergence struct {
	Kind string `json:"kind"`
	// Index is the call's position in the session's sequence of calls.
	Index int `json:"index"`
	// Turn is the user turn it happened in, from 1.
	Turn       int      `json:"turn"`
	Structural bool     `json:"structural"`
	Expected   *CallRef `json:"expected"`
	Actual     *CallRef `json:"actual"`
	// Attach is the recorded attach of its turn, from 1.
	Attach int `json:"attach,omitempty"`
	// After names the request changes of the divergence's attach (by
	// RequestChange.Name) that may explain it, those naming one of its
	// tools first.
	After []string `json:"after,omitempty"`
}

// IsStructural reports whether a divergence kind changes the shape of the
// run. Argument spellings do not: a model that reads the same file by
// another path spelling has not regressed.
func IsStructural(kind string) bool { return kind != KindArguments }

// Compare compares a replayed call with the recorded one at its position.
// It returns nil when they are the same call.
func Compare(expected Call, name string, input json.RawMessage) *Divergence {
	actual := &CallRef{Name: name, Input: input}
	exp := &CallRef{Name: expected.Name, Input: expected.Input}
	switch {
	case expected.Name != name:
		return &Divergence{Kind: KindTool, Structural: true, Expected: exp, Actual: actual}
	case !EqualJSON(expected.Input, input):
		return &Divergence{Kind: KindArguments, Expected: exp, Actual: actual}
	}
	return nil
}

// EqualJSON reports whether two JSON texts hold the same value: key order,
// white space and number spelling (1, 1.0, 1e0) do not count. Texts that
// are not JSON are equal only byte for byte.
func EqualJSON(a, b json.RawMessage) bool {
	va, erra := decodeJSON(a)
	vb, errb := decodeJSON(b)
	if erra != nil || errb != nil {
		return bytes.Equal(bytes.TrimSpace(a), bytes.TrimSpace(b))
	}
	return equalValue(va, vb)
}

func decodeJSON(raw json.RawMessage) (any, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data")
	}
	return v, nil
}

func equalValue(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !equalValue(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !equalValue(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		ra, oka := new(big.Rat).SetString(string(a))
		rb, okb := new(big.Rat).SetString(string(b))
		return oka && okb && ra.Cmp(rb) == 0
	}
	return a == b
}

// ArgDiff describes how two argument objects differ, one entry per
// top-level key that changed: `path: "a.txt" → "./a.txt"`. Inputs that are
// not objects are shown whole.
func ArgDiff(expected, actual json.RawMessage) []string {
	va, erra := decodeJSON(expected)
	vb, errb := decodeJSON(actual)
	ma, oka := va.(map[string]any)
	mb, okb := vb.(map[string]any)
	if erra != nil || errb != nil || !oka || !okb {
		return []string{fmt.Sprintf("%s → %s", textfmt.JSON(expected, 200), textfmt.JSON(actual, 200))}
	}
	keys := map[string]bool{}
	for k := range ma {
		keys[k] = true
	}
	for k := range mb {
		keys[k] = true
	}
	var names []string
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	var out []string
	for _, k := range names {
		a, ina := ma[k]
		b, inb := mb[k]
		switch {
		case !ina:
			out = append(out, fmt.Sprintf("%s: (absent) → %s", k, show(b)))
		case !inb:
			out = append(out, fmt.Sprintf("%s: %s → (absent)", k, show(a)))
		case !equalValue(a, b):
			out = append(out, fmt.Sprintf("%s: %s → %s", k, show(a), show(b)))
		}
	}
	return out
}

func show(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return textfmt.Clip(string(b), 120)
}
