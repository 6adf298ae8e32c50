package transcript

import (
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/testkit/transcripttest"
)

// v1Dir holds the frozen v1 fixtures.
var v1Dir = filepath.Join("testdata", "v1")

// v1Fixtures returns the frozen v1 fixtures.
func v1Fixtures(tb testing.TB) []string {
	return transcripttest.Fixtures(tb, v1Dir, "*.jsonl")
}
