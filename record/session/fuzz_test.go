package session

import (
	"bytes"
	"os"
	"reflect"
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
		// A buffer of a few bytes sends most lines down the paths for
		// lines longer than the buffer.
		for _, size := range []int{summaryBufSize, 7} {
			_, _, sums, err := readSummaries(bytes.NewReader(data), make([]byte, size), "fuzz", nil)
			if err != nil {
				t.Fatalf("buffer of %d: Load accepted what ReadSummaries refused: %v", size, err)
			}
			if !reflect.DeepEqual(sums, s.Summaries()) {
				t.Fatalf("buffer of %d: ReadSummaries found %+v, Load %+v", size, sums, s.Summaries())
			}
		}
		s.TaintTimeline()
		s.UsageTotals()
	})
}
