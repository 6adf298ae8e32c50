package root

import (
	"testing"

	"golang.org/x/sys/unix"
)

// TestHideProcess checks that hideProcess leaves the process undumpable,
// and restores the flag for the rest of the tests in this binary.
func TestHideProcess(t *testing.T) {
	before, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, uintptr(before), 0, 0, 0) })
	if before == 0 {
		t.Fatal("the test process is undumpable already: this test could not fail")
	}
	if err := hideProcess(); err != nil {
		t.Fatal(err)
	}
	if got, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0); err != nil || got != 0 {
		t.Errorf("PR_GET_DUMPABLE after hideProcess = %d, %v; want 0", got, err)
	}
}
