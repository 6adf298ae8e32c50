package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCachedTrial: the trial runs once per key; its result, yes or no, is
// read back after; a file written for another boot, user or build is not
// believed.
func TestCachedTrial(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	for _, want := range []bool{true, false} {
		runs := 0
		trial := func() bool { runs++; return want }
		file := filepath.Join(os.Getenv("XDG_CACHE_HOME"), "mecha", "sandbox-namespaces")
		os.Remove(file)
		for i := 0; i < 3; i++ {
			if got := cachedTrial(trial); got != want {
				t.Fatalf("cachedTrial = %v, want %v", got, want)
			}
		}
		if runs != 1 {
			t.Errorf("the trial ran %d times, want once", runs)
		}
		if err := os.WriteFile(file, []byte("boot other uid 0 exe /x 1 1 => yes\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := cachedTrial(trial); got != want || runs != 2 {
			t.Errorf("a result kept for another key was believed: %v, runs %d", got, runs)
		}
	}
}

// TestTrialNeedsTheHelper: an executable that exits 0 without being the
// helper (a test binary without its hook, say) does not pass the trial.
func TestTrialNeedsTheHelper(t *testing.T) {
	if err := runProbe(context.Background(), "/bin/true", t.TempDir()); err == nil {
		t.Fatal("/bin/true passed the namespace trial")
	}
}
