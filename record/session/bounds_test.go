package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestOversizedLineIsSkipped: a line longer than transcript.MaxLine (here
// a hole of zeros in a sparse file, with no newline) is read past without
// being held, skipped and reported, by Scan, Load and ReadSummaries alike;
// the records around it are kept.
func TestOversizedLineIsSkipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	const id = "20260805T091500-3f2a1b7c"
	sum := `{"record":"summary","turns":1}` + "\n"
	path := writeFile(t, dir, id+Ext, metaLine(id, day, "t")+sum)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Zeros up to MaxLine+2 bytes past the header, then a newline and a
	// summary: the zeros are line 3, one byte over the limit.
	st, _ := f.Stat()
	if _, err := f.WriteAt([]byte("\n"+sum), st.Size()+transcript.MaxLine+1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for _, torn := range []bool{false, true} {
		if torn { // the oversized line is the last, with no newline
			if err := os.Truncate(path, st.Size()+transcript.MaxLine+1); err != nil {
				t.Fatal(err)
			}
		}
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		wantSums := 2
		if torn {
			wantSums = 1
		}
		if s.Skipped != 1 || s.SkippedLines[0].Line != 3 || !s.SkippedLines[0].Oversized || s.SkippedLines[0].Torn != torn || len(s.Summaries()) != wantSums {
			t.Errorf("torn %v: skipped %+v, %d summaries", torn, s.SkippedLines, len(s.Summaries()))
		}
		_, sums, err := ReadSummaries(path)
		if err != nil || len(sums) != wantSums {
			t.Errorf("torn %v: ReadSummaries = %d summaries, %v", torn, len(sums), err)
		}
	}
}

// TestHeaderOverLimitIsNotASession: a first line longer than
// transcript.MaxHeader is not a session's header for any reader, and is
// not read past the limit (a sparse file of 1 GiB with no newline).
func TestHeaderOverLimitIsNotASession(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "20260805T091500-3f2a1b7c.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(path); !errors.Is(err, ErrNotSession) || !strings.Contains(err.Error(), "header longer than") {
		t.Errorf("Load: %v", err)
	}
	if _, err := PeekMeta(path); !errors.Is(err, ErrNotSession) {
		t.Errorf("PeekMeta: %v", err)
	}
	if _, _, err := ReadSummaries(path); !errors.Is(err, ErrNotSession) {
		t.Errorf("ReadSummaries: %v", err)
	}
}

// TestWriterRefusesOversizedRecord: a record longer than a reader accepts
// is not written, and recording stops.
func TestWriterRefusesOversizedRecord(t *testing.T) {
	t.Parallel()
	w := newSession(t, t.TempDir())
	defer w.Close()
	big := numbered("big", 0, transcript.MaxLine)
	if err := w.Append(big); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("Append of %d bytes: %v", transcript.MaxLine, err)
	}
	if err := w.Append(numbered("a", 0, 10)); err == nil {
		t.Error("recording went on after a refused record")
	}
	s, err := Load(w.Path())
	if err != nil || len(s.Records) != 0 || s.Skipped != 0 {
		t.Errorf("Load = %v, %d records, %d skipped", err, len(s.Records), s.Skipped)
	}
}
