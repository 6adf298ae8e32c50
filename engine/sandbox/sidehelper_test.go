package sandbox

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pair puts two copies of this test binary in a new directory, as mecha
// and as the side helper beside it: the same module, Go, dependencies and
// sandbox sources (its TestMain answers as the helper, as
// cmd/mecha-sandbox does).
func pair(t *testing.T) (mecha, side string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mecha, side = filepath.Join(dir, "mecha"), filepath.Join(dir, SideHelperName)
	for _, p := range []string{mecha, side} {
		if err := os.WriteFile(p, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return mecha, side
}

// TestSideHelper: the small helper beside mecha is started when it holds
// the same sandbox; a copy whose sandbox sources differ by one byte (an
// older or newer build), a file that is not a Go executable and one that
// others may write are passed over for mecha itself, each with a note.
func TestSideHelper(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	mecha, side := pair(t)
	if got, note := HelperExecutable(mecha); got != side || note != "" {
		t.Fatalf("HelperExecutable = %q (%s), want the side helper %q", got, note, side)
	}
	out, err := exec.Command(side, HelperArg, "--digest").Output()
	if err != nil || strings.TrimSpace(string(out)) != Digest() {
		t.Errorf("the side helper's digest is %q (%v), want %q", out, err, Digest())
	}

	good, err := os.ReadFile(side)
	if err != nil {
		t.Fatal(err)
	}
	src, _ := sources.ReadFile("supervise_linux.go")
	i := bytes.Index(good, src)
	if i < 0 {
		t.Fatal("the side helper does not hold the sandbox's sources")
	}
	tampered := bytes.Clone(good)
	tampered[i+len(src)/2] ^= 1

	cases := []struct {
		name string
		data []byte
		mode os.FileMode
		note string
	}{
		{"another build's sandbox", tampered, 0o755, "was built from another mecha"},
		{"not a Go executable", []byte("#!/bin/sh\nexit 0\n"), 0o755, "is not a Go executable"},
		{"writable by others", good, 0o777, "is writable by others than its owner"},
		{"not executable", good, 0o644, "is not an executable file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			m := filepath.Join(dir, "mecha")
			if err := os.Link(mecha, m); err != nil {
				b, _ := os.ReadFile(mecha)
				if err := os.WriteFile(m, b, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s := filepath.Join(dir, SideHelperName)
			if err := os.WriteFile(s, tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(s, tc.mode); err != nil {
				t.Fatal(err)
			}
			got, note := HelperExecutable(m)
			if got != m || !strings.Contains(note, tc.note) {
				t.Errorf("HelperExecutable = %q, note %q; want mecha itself, a note with %q", got, note, tc.note)
			}
		})
	}

	// No side helper: mecha itself, nothing to say.
	alone := filepath.Join(t.TempDir(), "mecha")
	if err := os.WriteFile(alone, good[:0], 0o755); err != nil {
		t.Fatal(err)
	}
	if got, note := HelperExecutable(alone); got != alone || note != "" {
		t.Errorf("without a side helper: %q, %q", got, note)
	}
}

// TestSourcesComplete: every source file of the package is embedded, so
// that a side helper differing in any of them is passed over.
func TestSourcesComplete(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		if !strings.HasSuffix(f, "_test.go") {
			want = append(want, f)
		}
	}
	if got := sourceNames(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("embedded %v, the package has %v: add the file to the go:embed line in sidehelper.go", got, want)
	}
}
