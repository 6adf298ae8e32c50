package sandbox

import (
	"context"
	"testing"
)

// TestTrialNeedsTheHelper: an executable that exits 0 without being the
// helper (a test binary without its hook, say) does not pass the trial.
func TestTrialNeedsTheHelper(t *testing.T) {
	if err := runProbe(context.Background(), "/bin/true", t.TempDir()); err == nil {
		t.Fatal("/bin/true passed the namespace trial")
	}
}
