package session

import (
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/testkit/transcripttest"
)

// v1Dir holds the frozen v1 fixtures.
var v1Dir = filepath.Join("..", "transcript", "testdata", "v1")

// v1Fixtures returns transcript's frozen v1 fixtures, which the store must
// load.
func v1Fixtures(tb testing.TB) []string {
	return transcripttest.Fixtures(tb, v1Dir, "*.jsonl")
}
