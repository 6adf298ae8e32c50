//go:build linux

// Package disktest gives a test a small disk to fill: what a full disk
// does to a writer is tested on a real one.
package disktest

import (
	"syscall"
	"testing"
)

// Small mounts a tmpfs of size (mount's size option, "64k") on a new
// temporary directory, unmounted when the test ends, and returns the
// directory. Mounting needs root (as in CI); elsewhere the test is
// skipped, saying why.
func Small(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v)", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}
