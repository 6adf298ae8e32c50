package session

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// fullTotals is the oracle: the totals of a file read whole, line by
// line, with none of the code under test: every line after the header
// that decodes as a summary (the last one too when it lacks its newline
// but is whole) adds its turns (the fixtures stay far from
// saturation), the last one's stop reason is the stop, and a session is
// finished when it has any.
func fullTotals(t *testing.T, path string) (turns int, stop string, finished bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n")[1:] { // after the header
		rec, err := transcript.Decode([]byte(line))
		if s, ok := rec.(*transcript.Summary); ok && err == nil {
			turns += s.Turns
			stop = s.StopReason
			finished = true
		}
	}
	return turns, stop, finished
}

// TestReadDirTotalsTail: the last line answers only when it is a complete
// summary carrying session_turns. Every case that must fall back carries a
// session_turns of 99 that taking the shortcut would show, so a fall-back
// case that took it fails; the first cases are the controls, where the
// field is trusted.
func TestReadDirTotalsTail(t *testing.T) {
	t.Parallel()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	head := metaLine("20260805T091500-00000001", day, "t")
	early := `{"record":"summary","turns":2,"stop_reason":"end_turn"}` + "\n"
	last := `{"record":"summary","turns":1,"stop_reason":"max_turns","session_turns":99}` + "\n"
	big := `{"record":"message","role":"user","content":[{"type":"text","text":"` + strings.Repeat("y", 3*tailSize) + `"}]}` + "\n"
	config := `{"record":"config","provider":"mock","model":"m"}` + "\n"
	for _, tc := range []struct {
		name, content string
		tail          bool
		turns         int
		stop          string
	}{
		{"summary last, file shorter than the tail", head + early + last, true, 99, "max_turns"},
		{"summary last, tail starts mid-line", head + early + big + last, true, 99, "max_turns"},
		{"summary longer than the first read", head + early + big + strings.TrimSuffix(last, "}\n") + `,"model":"` + strings.Repeat("m", 2*tailFirst) + "\"}\n", true, 99, "max_turns"},
		{"summary then a running attach's config", head + early + big + last + config, false, 3, "max_turns"},
		{"no summary", head + big + config, false, 0, ""},
		{"header only", head, false, 0, ""},
		{"last line longer than the tail", head + early + big + strings.TrimSuffix(last, "}\n") + `,"model":"` + strings.Repeat("m", tailSize) + "\"}\n", false, 3, "max_turns"},
		{"torn last line", head + early + last + `{"record":"summary","turns":4,"session_turns":99`, false, 3, "max_turns"},
		{"no newline after the summary", head + early + strings.TrimSuffix(last, "\n"), false, 3, "max_turns"},
		{"summary older than session_turns", head + early + `{"record":"summary","turns":1}` + "\n", false, 3, ""},
		{"kind not first", head + early + `{"turns":1,"record":"summary","session_turns":99}` + "\n", false, 3, ""},
		{"summary line that does not parse", head + early + `{"record":"summary","turns":"x","session_turns":99}` + "\n", false, 2, "end_turn"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := writeFile(t, dir, "20260805T091500-00000001.jsonl", tc.content)
			got, skipped, err := (&Store{Dir: dir}).Totals(nil, 0)
			if err != nil || len(skipped) != 0 || len(got) != 1 {
				t.Fatalf("ReadDirTotals = %+v, %v, %v", got, skipped, err)
			}
			g := got[0]
			if g.Err != nil || g.Tail != tc.tail || g.Turns != tc.turns || g.Stop != tc.stop {
				t.Errorf("got tail %v turns %d stop %q (err %v), want tail %v turns %d stop %q", g.Tail, g.Turns, g.Stop, g.Err, tc.tail, tc.turns, tc.stop)
			}
			if !tc.tail {
				turns, stop, finished := fullTotals(t, path)
				if g.Turns != turns || g.Stop != stop || g.Finished != finished {
					t.Errorf("fall-back = %d %q %v, full scan = %d %q %v", g.Turns, g.Stop, g.Finished, turns, stop, finished)
				}
			}
		})
	}
}

// TestReadDirTotalsMatchesFullScan is the oracle: over the frozen
// fixtures and generated sessions whose summaries carry a true
// session_turns, the totals equal the full scan's, by either path, and
// the generated ones take the shortcut. A store with a limit lists the
// same newest sessions with the same totals.
func TestReadDirTotalsMatchesFullScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range v1Fixtures(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, filepath.Base(f), string(data))
	}
	generated := map[string]bool{}
	s := &Store{Dir: dir, Now: fixedNow}
	for i := range 12 {
		w, err := s.Create(transcript.Meta{Provider: "mock", Model: "m", Title: fmt.Sprint(i)})
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for run := range i % 4 {
			total += run + i
			n := total
			w.Append(numbered("w", run, 1<<(8+i)), &transcript.Taint{Private: true},
				&transcript.Summary{Turns: run + i, StopReason: fmt.Sprint("stop", run), SessionTurns: &n})
		}
		w.Close()
		generated[w.Path()] = i%4 > 0
	}
	all, skipped, err := (&Store{Dir: dir}).Totals(nil, 0)
	if err != nil || len(skipped) != 0 {
		t.Fatal(err, skipped)
	}
	if want := len(v1Fixtures(t)) + 12; len(all) != want {
		t.Fatalf("%d sessions, want %d", len(all), want)
	}
	listed, err := (&Store{Dir: dir}).List()
	if err != nil {
		t.Fatal(err)
	}
	if len(listed.Sessions) != len(all) {
		t.Fatalf("List: %d sessions, ReadDirTotals: %d", len(listed.Sessions), len(all))
	}
	for i, g := range all {
		// The same sessions as List, in the same order, with their headers.
		if l := listed.Sessions[i]; !reflect.DeepEqual(g.Info, l) {
			t.Errorf("session %d: %+v, List has %+v", i, g.Info, l)
		}
		turns, stop, finished := fullTotals(t, g.Ref.Path())
		if g.Err != nil || g.Turns != turns || g.Stop != stop || g.Finished != finished {
			t.Errorf("%s (tail %v): %d %q %v, full scan %d %q %v", filepath.Base(g.Ref.Path()), g.Tail, g.Turns, g.Stop, g.Finished, turns, stop, finished)
		}
		if want, ok := generated[g.Ref.Path()]; ok && g.Tail != want {
			t.Errorf("%s: tail %v, want %v", filepath.Base(g.Ref.Path()), g.Tail, want)
		}
	}
	for _, limit := range []int{1, 5, len(all), len(all) + 3} {
		some, _, err := (&Store{Dir: dir}).Totals(nil, limit)
		if err != nil {
			t.Fatal(err)
		}
		if want := all[:min(limit, len(all))]; !reflect.DeepEqual(some, want) {
			t.Errorf("limit %d: %d sessions differ from the first of the full listing", limit, len(some))
		}
	}
}
