package importrules

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxKitLines bounds the CLI's kit: what every command shares grows into
// a composition root when nobody watches it (it had reached 1.9k lines).
const maxKitLines = 900

// TestCLIKitStaysSmall counts the lines of cli/cmdkit's non-test files.
func TestCLIKitStaysSmall(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "..", "cli", "cmdkit", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in cli/cmdkit: %v", err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(b, []byte("\n"))
	}
	if lines > maxKitLines {
		t.Errorf("cli/cmdkit has %d lines, more than %d: move what is not the CLI's own (the harness builds the agent)", lines, maxKitLines)
	}
}
