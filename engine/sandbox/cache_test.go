package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCachedTrial: the trial runs once per key; its result, yes or no, is
// read back after; a file written for another boot, user or build is not
// believed, and that other key's line is kept beside this one (two builds
// used in turn each keep theirs), up to trialKeep; a trial cut short is
// not kept.
func TestCachedTrial(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	file := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "mecha", "sandbox-namespaces")
	const other = "boot other uid 0 exe /x 1 1 => yes"
	for _, want := range []bool{true, false} {
		runs := 0
		trial := func() (bool, string, bool) { runs++; return want, "refused\nby the kernel", true }
		os.Remove(file)
		for i := 0; i < 3; i++ {
			if got, why := cachedTrial(trial); got != want || (!got && why != "refused by the kernel" && why != "refused\nby the kernel") {
				t.Fatalf("cachedTrial = %v (%q), want %v", got, why, want)
			}
		}
		if runs != 1 {
			t.Errorf("the trial ran %d times, want once", runs)
		}
		if err := os.WriteFile(file, []byte(other+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got, _ := cachedTrial(trial); got != want || runs != 2 {
			t.Errorf("a result kept for another key was believed: %v, runs %d", got, runs)
		}
		if got, _ := cachedTrial(trial); got != want || runs != 2 {
			t.Errorf("the result was not kept beside another key's: %v, runs %d", got, runs)
		}
		if b, _ := os.ReadFile(file); !strings.HasPrefix(string(b), other+"\n") {
			t.Errorf("the other key's line was lost: %q", b)
		}
	}

	// Only the last trialKeep keys are kept.
	var lines []string
	for i := 0; i < trialKeep+3; i++ {
		lines = append(lines, fmt.Sprintf("boot b%d uid 0 exe /x 1 1 => yes", i))
	}
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cachedTrial(func() (bool, string, bool) { return true, "", true })
	b, _ := os.ReadFile(file)
	if got := strings.Split(strings.TrimSpace(string(b)), "\n"); len(got) != trialKeep || got[0] != lines[len(lines)-trialKeep+1] {
		t.Errorf("kept %d lines starting %q, want %d starting %q", len(got), got[0], trialKeep, lines[len(lines)-trialKeep+1])
	}

	// A trial cut short is believed for the process, not kept.
	os.Remove(file)
	runs := 0
	short := func() (bool, string, bool) { runs++; return false, "timed out", false }
	cachedTrial(short)
	cachedTrial(short)
	if runs != 2 {
		t.Errorf("a trial cut short was kept: it ran %d times, want 2", runs)
	}
	if _, err := os.Stat(file); err == nil {
		t.Error("a trial cut short was written to the cache")
	}
}
