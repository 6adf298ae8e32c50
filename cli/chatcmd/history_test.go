package chatcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHistoryFile: the file keeps the newest historyMax prompts, keeps
// what another chat of the workspace added meanwhile, skips lines it
// cannot read, and a prompt not to keep stays in memory only.
func TestHistoryFile(t *testing.T) {
	t.Parallel()
	path := historyPath(t.TempDir(), "/some/workspace")
	h := loadHistory(path)
	for i := range historyMax + 10 {
		if err := h.add(fmt.Sprintf("prompt %d", i), true)(); err != nil {
			t.Fatal(err)
		}
	}
	other := loadHistory(path)
	if len(other.entries) != historyMax || other.entries[0] != "prompt 10" || other.entries[historyMax-1] != fmt.Sprintf("prompt %d", historyMax+9) {
		t.Fatalf("%d entries from %q to %q", len(other.entries), other.entries[0], other.entries[len(other.entries)-1])
	}
	if err := other.add("from the other chat", true)(); err != nil {
		t.Fatal(err)
	}
	if w := h.add("a secret pasted", false); w != nil {
		t.Fatal("a paste is to be written")
	}
	first := h.add("typed \"quoted\"\nover two lines", true)
	h.add("and another", true)
	if err := first(); err != nil { // writes both, in order
		t.Fatal(err)
	}
	if err := h.flush(); err != nil { // nothing left to write
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(b), "\"from the other chat\"\n\"typed \\\"quoted\\\"\\nover two lines\"\n\"and another\"\n") || strings.Contains(string(b), "secret") {
		t.Errorf("the file ends %q", b[max(0, len(b)-120):])
	}
	if s, _ := h.older(""); s != "and another" {
		t.Errorf("Up gives %q", s)
	}
	if s, _ := h.older(""); s != "typed \"quoted\"\nover two lines" {
		t.Errorf("Up, Up gives %q", s)
	}
	if s, _ := h.older(""); s != "a secret pasted" {
		t.Errorf("the paste is not in this chat's history: %q", s)
	}
	os.WriteFile(path, append([]byte("not json\n"), b...), 0o600)
	if got := loadHistory(path).entries; len(got) != historyMax || got[len(got)-1] != "and another" {
		t.Errorf("with a bad line: %d entries", len(got))
	}
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	if found, at := h.search("QUOTED", len(h.entries)); at < 0 || !strings.HasPrefix(found, "typed") {
		t.Errorf("search: %q at %d", found, at)
	}
}
