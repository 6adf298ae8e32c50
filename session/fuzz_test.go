package session

import (
	"bytes"
	"os"
	"testing"
)

// FuzzLoad feeds arbitrary bytes to the loader and the summary scanner: they
// must never panic, must agree on the summaries, and the loader must only
// fail when the first line is not a header.
func FuzzLoad(f *testing.F) {
	for _, name := range v1Fixtures(f) {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("{\"record\":\"meta\",\"id\":\"x\"}\n\n\r\n{\"record\":\"summary\",\"turns\":-1}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := read(bytes.NewReader(data))
		if err != nil {
			return
		}
		if s.Skipped < len(s.SkippedLines) || len(s.SkippedLines) > maxSkippedDetail {
			t.Fatalf("skipped %d with %d details", s.Skipped, len(s.SkippedLines))
		}
		_, sums, err := readSummaries(bytes.NewReader(data), "fuzz")
		if err != nil {
			t.Fatalf("Load accepted what ReadSummaries refused: %v", err)
		}
		if len(sums) != len(s.Summaries()) {
			t.Fatalf("ReadSummaries found %d summaries, Load %d", len(sums), len(s.Summaries()))
		}
		s.TaintTimeline()
		s.UsageTotals()
	})
}
