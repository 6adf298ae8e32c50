package regresscmd

import (
	"encoding/xml"
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Time     float64     `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      float64       `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the results as JUnit XML, which CI systems display:
// a divergence is a failure, a refused or failed replay an error.
func writeJUnit(path string, sum regressSummary) error {
	suite := junitSuite{Name: "mecha regress", Tests: len(sum.Results)}
	if sum.Shard != "" {
		suite.Name += " (shard " + sum.Shard + ")"
	}
	for _, r := range sum.Results {
		c := junitCase{Name: r.ID, Classname: "mecha.regress", Time: r.Time}
		if r.Title != "" {
			c.Name = r.ID + " " + textfmt.OneLine(r.Title)
		}
		suite.Time += r.Time
		switch r.Status {
		case "diverged":
			suite.Failures++
			var sb strings.Builder
			for _, d := range r.Report.Divergences {
				replaycmd.PrintDivergence(&sb, d)
			}
			d := r.Report.Divergences[0]
			c.Failure = &junitProblem{Type: d.Kind, Text: sb.String(),
				Message: fmt.Sprintf("%d %s, the first (%s) at call #%d", len(r.Report.Divergences), textfmt.Plural(len(r.Report.Divergences), "divergence", "divergences"), d.Kind, d.Index)}
		case "refused", "failed":
			suite.Errors++
			c.Error = &junitProblem{Type: r.Status, Message: r.Error, Text: r.Error}
		}
		suite.Cases = append(suite.Cases, c)
	}
	out, err := xml.MarshalIndent(junitSuites{Suites: []junitSuite{suite}}, "", "  ")
	if err != nil {
		return err
	}
	out = append([]byte(xml.Header), append(out, '\n')...)
	if err := atomicfile.WriteFile(path, out, 0o644); err != nil {
		return fmt.Errorf("regress: --junit: %w", err)
	}
	return nil
}
