package transcript

import (
	"path/filepath"
	"testing"
)

// v1Dir holds the frozen v1 fixtures.
var v1Dir = filepath.Join("testdata", "v1")

// v1Fixtures returns the paths of the frozen v1 fixtures, and fails tb when
// there are none: a test driven by them must not pass by reading nothing.
func v1Fixtures(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(v1Dir, "*.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no fixtures (*.jsonl) in %s", v1Dir)
	}
	return files
}
