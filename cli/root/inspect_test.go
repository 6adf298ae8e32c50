package root_test

import (
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mecha-agent/mecha/testkit/inspecttest"
)

// TestInspectScripts runs the scripts of testdata/inspect, which write
// Inspect eval logs and read them back with Inspect's own reader
// ($INSPECT_PYTHON, a virtual environment with inspect-ai from the Python
// package index; the test skips, saying why, where it cannot be had).
// testdata/inspect_summary.py prints what a script checks of a log.
func TestInspectScripts(t *testing.T) {
	t.Parallel()
	py := inspecttest.Python(t)
	testscript.Run(t, scriptParams(filepath.Join("testdata", "inspect"), func(e *testscript.Env) error {
		e.Setenv("INSPECT_PYTHON", py)
		summary, err := filepath.Abs(filepath.Join("testdata", "inspect_summary.py"))
		e.Setenv("INSPECT_SUMMARY", summary)
		return err
	}))
}
