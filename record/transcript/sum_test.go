package transcript

import (
	"bytes"
	"math"
	"testing"
)

// TestSumsSaturate: totals stop at the largest value of their type instead
// of wrapping round to a small or negative number.
func TestSumsSaturate(t *testing.T) {
	t.Parallel()
	const q = 1 << 62
	var u Usage
	turns := 0
	for range 4 {
		u = u.Add(Usage{InputTokens: q, OutputTokens: 1})
		turns = AddTurns(turns, q)
	}
	if u.InputTokens != math.MaxUint64 || u.OutputTokens != 4 || !u.Saturated() {
		t.Errorf("4 × 2^62 tokens = %+v", u)
	}
	if turns != math.MaxInt {
		t.Errorf("4 × 2^62 turns = %d", turns)
	}
	if (Usage{InputTokens: 3}).Add(Usage{InputTokens: 4}).Saturated() {
		t.Error("a small sum is saturated")
	}
	if got := AddTurns(math.MinInt+1, -5); got != math.MinInt {
		t.Errorf("AddTurns downwards = %d", got)
	}
}

// TestMessageOfAnyRoleEncodes: a message of a role mecha does not write
// (system, from another tool's transcript) is read and written back as it
// is, so a view of the session does not fail on it; only an empty role is
// refused.
func TestMessageOfAnyRoleEncodes(t *testing.T) {
	t.Parallel()
	line := []byte(`{"record":"message","role":"system","content":[{"type":"text","text":"You are a pirate."}]}` + "\n")
	r, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Encode(r)
	if err != nil || !bytes.Equal(out, line) {
		t.Errorf("Encode = %q, %v", out, err)
	}
	if _, err := Encode(&Message{Content: []Block{TextBlock("x")}}); err == nil {
		t.Error("a message without a role encoded")
	}
}
