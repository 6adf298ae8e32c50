package regresscmd

import (
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// kinds are the divergence kinds in the order a comparison lists them.
var kinds = []string{replay.KindTool, replay.KindArguments, replay.KindExtra, replay.KindMissing}

// printComparison writes the suites of several models side by side: one
// row per model (clean pins, pass@1, pass^K when repeated, divergences by
// kind, tokens, cost, wall time), then each pin's status on each model.
func printComparison(w io.Writer, st textfmt.Style, sums []regressSummary) {
	k := sums[0].Repeat
	t := &cmdkit.Table{Right: map[int]bool{1: true, 2: true, 3: true}}
	head := []string{"MODEL", "CLEAN", "PASS@1"}
	if k > 1 {
		head = append(head, fmt.Sprintf("PASS^%d", k))
		t.Right[3] = true
	}
	t.Add(append(head, "DIVERGENCES", "TOKENS IN/OUT", "COST", "TIME")...)
	for _, s := range sums {
		row := []string{textfmt.VisibleLine(modelName(s)), fmt.Sprintf("%d/%d", s.Clean, s.Pins), fmt.Sprintf("%.2f", s.PassAt1)}
		if k > 1 {
			row = append(row, fmt.Sprintf("%.2f", s.PassHatK))
		}
		t.Add(append(row, divergenceCounts(s.Divergences), tokenCounts(s.Tokens), cost(s.CostUSD), seconds(s.Seconds))...)
	}
	t.Write(w, st)
	if len(sums[0].Results) == 0 {
		return
	}
	fmt.Fprintln(w)
	pins := &cmdkit.Table{}
	head = []string{"SESSION", "TITLE"}
	for _, s := range sums {
		head = append(head, strings.ToUpper(textfmt.VisibleLine(modelName(s))))
	}
	pins.Add(head...)
	for i, r := range sums[0].Results {
		row := []string{r.ID, textfmt.Clip(textfmt.VisibleLine(r.Title), 40)}
		for _, s := range sums {
			row = append(row, pinCell(s.Results[i], k))
		}
		pins.Add(row...)
	}
	pins.Write(w, st)
	printPinChanges(w, sums[0].Results)
	for _, s := range sums {
		for _, p := range s.flakyPins() {
			fmt.Fprintf(w, "flaky on %s: %s (%d of %d runs clean)\n", textfmt.VisibleLine(modelName(s)), p.ID, p.Clean, p.Runs)
		}
	}
}

// pinCell is a pin's status on one model, with its clean runs when
// repeated and where it first diverged.
func pinCell(p pinResult, k int) string {
	cell := p.Status
	if k > 1 && p.Status != statusRefused && p.Status != statusFailed {
		cell += fmt.Sprintf(" %d/%d", p.Clean, k)
	}
	if p.Report != nil && p.Status != statusClean && p.Status != statusRefused {
		if first := firstDivergence(p.Report); first != "" {
			cell += " (" + first + ")"
		}
	}
	return cell
}

// divergenceCounts lists the divergences by kind, "none" for none.
func divergenceCounts(by map[string]int) string {
	var parts []string
	for _, k := range kinds {
		if n := by[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, n))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func tokenCounts(t tokens) string {
	return textfmt.Count(t.Input+t.CacheRead+t.CacheWrite) + "/" + textfmt.Count(t.Output)
}

// cost is a suite's cost, "unpriced" when a model that answered has no
// price in config.toml.
func cost(usd *float64) string {
	if usd == nil {
		return "unpriced"
	}
	return textfmt.Dollars(*usd)
}

// seconds is a wall time: two decimals under ten seconds, one above.
func seconds(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.2fs", s)
	}
	return fmt.Sprintf("%.1fs", s)
}
