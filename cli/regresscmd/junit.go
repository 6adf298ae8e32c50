package regresscmd

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/redrive/replay"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Time       float64         `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name       string          `xml:"name,attr"`
	Classname  string          `xml:"classname,attr"`
	Time       float64         `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Failure    *junitProblem   `xml:"failure,omitempty"`
	Error      *junitProblem   `xml:"error,omitempty"`
	// Flaky are the divergent runs of a pin clean in other runs, as
	// Maven Surefire writes a test that failed and passed on a rerun.
	Flaky []junitFlaky `xml:"flakyFailure,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitFlaky struct {
	Message    string `xml:"message,attr"`
	Type       string `xml:"type,attr"`
	StackTrace string `xml:"stackTrace"`
}

// writeJUnit writes the suites (one per model) as JUnit XML, which CI
// systems display: a divergence is a failure, a refused or failed replay
// an error. With --repeat, the suite's rates and each pin's counts are
// properties, and a flaky pin is a failure of type "flaky" whose
// divergent runs are flakyFailure elements.
func writeJUnit(path string, sums []regressSummary) error {
	var out junitSuites
	for _, sum := range sums {
		out.Suites = append(out.Suites, junitSuiteOf(sum, len(sums) > 1))
	}
	b, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return err
	}
	b = append([]byte(xml.Header), append(b, '\n')...)
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("regress: --junit: %w", err)
	}
	return nil
}

func junitSuiteOf(sum regressSummary, named bool) junitSuite {
	suite := junitSuite{Name: "mecha regress", Tests: len(sum.Results)}
	if named {
		suite.Name += " on " + modelName(sum)
	}
	if sum.Shard != "" {
		suite.Name += " (shard " + sum.Shard + ")"
	}
	k := sum.Repeat
	if k > 1 {
		suite.Properties = []junitProperty{prop("repeat", k), prop("runs", sum.Runs), prop("flaky", sum.Flaky),
			prop("pass_at_1", sum.PassAt1), prop("pass_at_k", sum.PassAtK), prop("pass_hat_k", sum.PassHatK)}
	}
	for _, r := range sum.Results {
		c := junitCase{Name: r.ID, Classname: "mecha.regress", Time: r.Time}
		if r.Title != "" {
			c.Name = r.ID + " " + textfmt.OneLine(r.Title)
		}
		if k > 1 {
			c.Properties = []junitProperty{prop("runs", r.Runs), prop("clean", r.Clean),
				prop("pass_at_k", r.PassAtK), prop("pass_hat_k", r.PassHatK), prop("flaky", r.Flaky)}
		}
		suite.Time += r.Time
		switch r.Status {
		case statusDiverged:
			suite.Failures++
			c.Failure = divergenceProblem(r.Report)
			if k > 1 {
				c.Failure.Message = fmt.Sprintf("diverged in all %d runs; the first: %s", r.Runs, c.Failure.Message)
			}
		case statusFlaky:
			suite.Failures++
			c.Failure = &junitProblem{Type: statusFlaky, Message: fmt.Sprintf("flaky: %d of %d runs clean", r.Clean, r.Runs)}
			for i, rep := range r.Reports {
				if r.failed[i] {
					p := divergenceProblem(rep)
					c.Flaky = append(c.Flaky, junitFlaky{Type: p.Type, Message: fmt.Sprintf("run %d: %s", i+1, p.Message), StackTrace: p.Text})
				}
			}
			c.Failure.Text = c.Flaky[0].StackTrace
		case statusRefused, statusFailed:
			suite.Errors++
			c.Error = &junitProblem{Type: r.Status, Message: r.Error, Text: r.Error}
		}
		suite.Cases = append(suite.Cases, c)
	}
	return suite
}

// divergenceProblem describes a divergent replay: its divergences, the
// first named in the message.
func divergenceProblem(rep *replay.Report) *junitProblem {
	var sb strings.Builder
	for _, d := range rep.Divergences {
		replaycmd.PrintDivergence(&sb, d)
	}
	if len(rep.Divergences) == 0 {
		return &junitProblem{Type: "diverged", Message: "a child session diverged", Text: sb.String()}
	}
	d := rep.Divergences[0]
	n := len(rep.Divergences)
	return &junitProblem{Type: d.Kind, Text: sb.String(),
		Message: fmt.Sprintf("%d %s, the first (%s) at call #%d", n, textfmt.Plural(n, "divergence", "divergences"), d.Kind, d.Index)}
}

func prop(name string, v any) junitProperty {
	switch v := v.(type) {
	case float64:
		return junitProperty{name, strconv.FormatFloat(v, 'f', 4, 64)}
	default:
		return junitProperty{name, fmt.Sprint(v)}
	}
}

// modelName is who answered a suite: -p/-m, or "the recorded models".
func modelName(sum regressSummary) string {
	switch {
	case sum.Model != "" && sum.Provider != "":
		return sum.Provider + "/" + sum.Model
	case sum.Model != "":
		return sum.Model
	case sum.Provider != "":
		return sum.Provider
	}
	return "the recorded models"
}
