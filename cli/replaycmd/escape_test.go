package replaycmd

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/redrive/replay"
)

// TestDivergenceShowsNothingRaw: a recorded tool name and arguments
// holding a set-title sequence reach the report escaped.
func TestDivergenceShowsNothingRaw(t *testing.T) {
	t.Parallel()
	attack := "\x1b]0;pwned\x07"
	exp := &replay.CallRef{Name: "a" + attack, Input: json.RawMessage("{\"p\":\"\u202e\"}")}
	got := &replay.CallRef{Name: "b", Input: json.RawMessage(`{"p":"x"}`)}
	for _, kind := range []string{replay.KindTool, replay.KindArguments, replay.KindExtra, replay.KindMissing} {
		var out bytes.Buffer
		PrintDivergence(&out, replay.Divergence{Kind: kind, Turn: 1, Index: 1, Expected: exp, Actual: got})
		if out.Len() == 0 || strings.ContainsAny(out.String(), "\x1b\x07\u202e") {
			t.Errorf("%s: %q", kind, out.String())
		}
	}
}
