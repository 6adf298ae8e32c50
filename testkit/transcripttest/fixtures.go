// Package transcripttest helps the tests of packages that read
// transcripts: it finds the frozen fixtures every build must still read.
package transcripttest

import (
	"path/filepath"
	"testing"
)

// Fixtures returns the files in dir matching pattern, and fails tb when
// there are none: a test driven by fixtures must not pass by reading
// nothing.
func Fixtures(tb testing.TB, dir, pattern string) []string {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no fixtures (%s) in %s", pattern, dir)
	}
	return files
}
