package session

import (
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestCreateClipsHeader: the writer never writes a header the readers
// refuse. Fields of any length are clipped with a mark at creation, the
// session lists and loads, and the worst case (every character escaped)
// still fits.
func TestCreateClipsHeader(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := &Store{Dir: dir, Now: fixedNow}
	for _, fill := range []string{"x", "\x01", "€"} {
		w, err := s.Create(transcript.Meta{Provider: strings.Repeat(fill, 70000), Model: strings.Repeat(fill, 70000),
			Workspace: strings.Repeat(fill, 70000), Title: strings.Repeat(fill, 70000), ReplayOf: strings.Repeat(fill, 70000)})
		if err != nil {
			t.Fatalf("%q: %v", fill, err)
		}
		w.Close()
		m, err := PeekMeta(w.Path())
		if err != nil {
			t.Fatalf("%q: %v", fill, err)
		}
		if n := len([]rune(m.Title)); n != MaxTitle || !strings.HasSuffix(m.Title, "…") {
			t.Errorf("%q: title of %d runes", fill, n)
		}
		if n := len([]rune(m.Workspace)); n != MaxWorkspace {
			t.Errorf("%q: workspace of %d runes", fill, n)
		}
		if _, err := Load(w.Path()); err != nil {
			t.Errorf("%q: %v", fill, err)
		}
	}
}
