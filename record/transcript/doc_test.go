package transcript

import (
	"bufio"
	"os"
	"strings"
	"testing"
)

// TestDocExamples holds doc.go to what this build writes: every example
// record decodes, and encodes back to the same line, so an example cannot
// show a field order, a field or a spelling that no writer produces.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	f, err := os.Open("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	kinds := map[string]bool{}
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "//\t")
		if !ok || !strings.HasPrefix(line, `{"record":`) {
			continue
		}
		r, err := Decode([]byte(line))
		if err != nil {
			t.Errorf("example does not decode: %v\n%s", err, line)
			continue
		}
		kinds[r.Kind()] = true
		back, err := Encode(r)
		if err != nil {
			t.Errorf("example does not encode back: %v\n%s", err, line)
			continue
		}
		if got := strings.TrimSuffix(string(back), "\n"); got != line {
			t.Errorf("example is not what a writer writes:\nexample %s\nwritten %s", line, got)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{KindMeta, KindConfig, KindMessage, KindTaint, KindSummary, KindCompaction, KindToolCall, KindToolCallStart} {
		if !kinds[k] {
			t.Errorf("doc.go has no example of a %s record", k)
		}
	}
}
