package regresscmd

import (
	"encoding/xml"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/redrive/replay"
)

// run is a finished replay: clean, or diverged at call 0 (another tool).
func run(clean bool) *replay.Report {
	r := &replay.Report{Status: replay.StatusClean, Divergences: []replay.Divergence{}}
	if !clean {
		r.Status = replay.StatusDiverged
		r.Divergences = []replay.Divergence{{Kind: replay.KindTool, Structural: true,
			Expected: &replay.CallRef{Name: "fs_read"}, Actual: &replay.CallRef{Name: "fs_list"}}}
	}
	return r
}

func pinOf(id string, k int, runs ...bool) pinResult {
	p := pinResult{ID: id}
	for _, clean := range runs {
		p.add(run(clean), !clean)
	}
	p.settle(k)
	return p
}

// TestPinSettle: a pin's status and its pass@1, pass@K and pass^K from its
// runs; refused and failed pins pass nothing.
func TestPinSettle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		runs          []bool
		status        string
		at1           float64
		atK, hatK, fl bool
	}{
		{"all clean", []bool{true, true, true, true}, statusClean, 1, true, true, false},
		{"some clean", []bool{true, false, true, false}, statusFlaky, 0.5, true, false, true},
		{"one clean", []bool{false, false, false, true}, statusFlaky, 0.25, true, false, true},
		{"none clean", []bool{false, false, false, false}, statusDiverged, 0, false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pinOf("a", 4, tc.runs...)
			if p.Status != tc.status || p.PassAt1 != tc.at1 || p.PassAtK != tc.atK || p.PassHatK != tc.hatK || p.Flaky != tc.fl {
				t.Errorf("got %s %v %v %v %v", p.Status, p.PassAt1, p.PassAtK, p.PassHatK, p.Flaky)
			}
			if len(p.Reports) != 4 || p.Runs != 4 {
				t.Errorf("%d runs, %d reports", p.Runs, len(p.Reports))
			}
			if tc.status == statusFlaky && p.Report.Status != replay.StatusDiverged {
				t.Errorf("a flaky pin's report is a clean run's")
			}
		})
	}
	failed := pinResult{ID: "f", Status: statusFailed}
	failed.add(run(true), false)
	failed.settle(4)
	if failed.PassAtK || failed.PassHatK || failed.PassAt1 != 0.25 || failed.Flaky {
		t.Errorf("a failed pin passes: %+v", failed)
	}
	if one := pinOf("o", 1, true); one.Reports != nil {
		t.Errorf("one run keeps a reports list")
	}
}

// TestSuiteRates: the rates are over pins, a refused pin counting as none
// clean.
func TestSuiteRates(t *testing.T) {
	t.Parallel()
	s := regressSummary{Repeat: 4, Divergences: map[string]int{}, CostUSD: new(float64)}
	s.add(pinOf("a", 4, true, true, true, true))
	s.add(pinOf("b", 4, true, false, true, false))
	refused := pinResult{ID: "c", Status: statusRefused}
	refused.settle(4)
	s.add(refused)
	s.rates()
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if !near(s.PassAt1, 1.5/3) || !near(s.PassAtK, 2.0/3) || !near(s.PassHatK, 1.0/3) {
		t.Errorf("rates %v %v %v", s.PassAt1, s.PassAtK, s.PassHatK)
	}
	if s.Clean != 1 || s.Flaky != 1 || s.Refused != 1 || s.Runs != 8 || s.bad() != 2 || s.Divergences[replay.KindTool] != 2 {
		t.Errorf("counts %+v", s)
	}
	if s.CostUSD != nil {
		t.Errorf("runs without a price have a cost")
	}
}

// TestJUnitFlaky: a flaky pin is a failure of type flaky with a
// flakyFailure per divergent run; the rates are properties.
func TestJUnitFlaky(t *testing.T) {
	t.Parallel()
	s := regressSummary{Repeat: 3, Divergences: map[string]int{}}
	s.add(pinOf("a", 3, true, false, false))
	s.add(pinOf("b", 3, true, true, true))
	s.rates()
	path := filepath.Join(t.TempDir(), "j.xml")
	if err := writeJUnit(path, []regressSummary{s}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	suite := got.Suites[0]
	if suite.Failures != 1 || len(suite.Cases) != 2 {
		t.Fatalf("suite %+v", suite)
	}
	c := suite.Cases[0]
	if c.Failure == nil || c.Failure.Type != statusFlaky || len(c.Flaky) != 2 || !strings.HasPrefix(c.Flaky[1].Message, "run 3: ") {
		t.Errorf("flaky case %+v", c)
	}
	if suite.Cases[1].Failure != nil || len(suite.Cases[1].Flaky) != 0 {
		t.Errorf("clean case %+v", suite.Cases[1])
	}
	props := map[string]string{}
	for _, p := range suite.Properties {
		props[p.Name] = p.Value
	}
	if props["pass_hat_k"] != "0.5000" || props["flaky"] != "1" || props["repeat"] != "3" {
		t.Errorf("properties %v", props)
	}
}
