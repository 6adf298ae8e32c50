package reruncmd

import (
	"bytes"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/redrive/toolreplay"
)

// TestReportShowsNothingRaw: a tool's name, reason and the diff of its
// output holding a set-title sequence reach the report escaped. The
// control: the report's inputs hold the raw bytes.
func TestReportShowsNothingRaw(t *testing.T) {
	t.Parallel()
	attack := "\x1b]0;pwned\x07\u202e"
	rep := &toolreplay.Report{Session: "s", Calls: 1, Changed: 1, Results: []toolreplay.Result{{
		Index: 1, Name: "n" + attack, Status: "differs", Reason: "r" + attack,
		Diff: "--- recorded\n+++ today\n-old" + attack + "\n+new\n",
	}}}
	if !strings.Contains(rep.Results[0].Diff, "\x1b") {
		t.Fatal("no raw control in the report: the check could not fail")
	}
	var out bytes.Buffer
	if err := printReport(&out, textfmt.Style{}, rep, "/ws", true); err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(out.String(), "\x1b\x07\u202e") {
		t.Errorf("a raw control in the report: %q", out.String())
	}
	if n := strings.Count(out.String(), `\x1b]0;pwned\x07\u202e`); n != 3 {
		t.Errorf("the attack is shown escaped %d times, want 3: %q", n, out.String())
	}
}
