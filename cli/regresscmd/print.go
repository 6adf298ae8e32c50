package regresscmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// printRegress writes a suite's table for a person: one row per pin,
// then the counts and, with --repeat, the rates and the flaky pins.
func printRegress(w io.Writer, st textfmt.Style, sum regressSummary) {
	if len(sum.Results) == 0 {
		return
	}
	k := sum.Repeat
	t := &cmdkit.Table{Right: map[int]bool{3: true}}
	if k > 1 {
		t.Right = map[int]bool{3: true, 4: true}
		t.Add("SESSION", "TITLE", "STATUS", "CLEAN", "CALLS", "FIRST DIVERGENCE")
	} else {
		t.Add("SESSION", "TITLE", "STATUS", "CALLS", "FIRST DIVERGENCE")
	}
	for _, r := range sum.Results {
		calls, first := "", ""
		if r.Report != nil && r.Report.Status != replay.StatusRefused {
			calls = fmt.Sprintf("%d/%d", r.Report.CallsReplayed, r.Report.CallsExpected)
			first = firstDivergence(r.Report)
		}
		if r.Error != "" {
			first = textfmt.Clip(textfmt.VisibleLine(r.Error), 80)
		}
		row := []string{r.ID, textfmt.Clip(textfmt.VisibleLine(r.Title), 40), r.Status}
		if k > 1 {
			row = append(row, fmt.Sprintf("%d/%d", r.Clean, k))
		}
		t.Add(append(row, calls, first)...)
	}
	t.Write(w, st)
	fmt.Fprintln(w)
	if k == 1 {
		fmt.Fprintf(w, "%d pinned: %d clean, %d diverged, %d refused, %d failed\n", sum.Pins, sum.Clean, sum.Diverged, sum.Refused, sum.Failed)
	} else {
		fmt.Fprintf(w, "%d pinned, %d runs each: %d clean, %d flaky, %d diverged, %d refused, %d failed\n",
			sum.Pins, k, sum.Clean, sum.Flaky, sum.Diverged, sum.Refused, sum.Failed)
		fmt.Fprintf(w, "pass@1 %.2f · pass@%d %.2f · pass^%d %.2f\n", sum.PassAt1, k, sum.PassAtK, k, sum.PassHatK)
	}
	printPinChanges(w, sum.Results)
	if flaky := sum.flakyPins(); len(flaky) > 0 {
		var names []string
		for _, p := range flaky {
			names = append(names, fmt.Sprintf("%s (%d of %d runs clean)", p.ID, p.Clean, p.Runs))
		}
		fmt.Fprintf(w, "flaky: %s\n", strings.Join(names, ", "))
	}
}

// firstDivergence names a report's first divergence, "" when it has none.
func firstDivergence(r *replay.Report) string {
	if len(r.Divergences) == 0 {
		return ""
	}
	d := r.Divergences[0]
	return fmt.Sprintf("%s at call #%d", d.Kind, d.Index)
}

// printPinChanges names, pin by pin, what changed in the request since
// the recording (the model and provider -m and -p asked for aside).
func printPinChanges(w io.Writer, pins []pinResult) {
	header := false
	for _, p := range pins {
		if p.Report == nil {
			continue
		}
		var what []string
		for _, c := range p.Report.RequestChanges {
			if c.Field == replay.FieldModel || c.Field == replay.FieldProvider {
				continue
			}
			if phrase := replaycmd.ChangePhrase(c.Name()); !slices.Contains(what, phrase) {
				what = append(what, phrase)
			}
		}
		if len(what) == 0 {
			continue
		}
		if !header {
			fmt.Fprintln(w, "changed since the recording (replay ID shows how):")
			header = true
		}
		fmt.Fprintf(w, "  %s: %s\n", p.ID, strings.Join(what, ", "))
	}
}
