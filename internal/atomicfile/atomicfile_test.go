package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteFileReplacesWhole(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "report.xml")
	if err := os.WriteFile(p, []byte("old content that is longer"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestWriteFileHonoursTheUmask: a new file gets perm less the umask, as
// os.WriteFile would give it. Not parallel: it sets the process's umask.
func TestWriteFileHonoursTheUmask(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "f")
	if err := WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v under umask 077, want -rw-------", st.Mode().Perm())
	}
}

func TestWriteFileIntoAMissingDirectory(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "no", "such", "f")
	if err := WriteFile(p, []byte("x"), 0o644); err == nil {
		t.Fatal("wrote into a missing directory")
	}
}

// TestWriteFailedFillLeavesTheOld: when the writer fails half-way, the old
// file stays whole and no temporary file is left; the control shows the
// same fill replacing the file when it does not fail.
func TestWriteFailedFillLeavesTheOld(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "page.html")
	if err := os.WriteFile(p, []byte("old page"), 0o600); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	fill := func(fail bool) func(io.Writer) error {
		return func(w io.Writer) error {
			io.WriteString(w, "half a new page")
			if fail {
				return boom
			}
			return nil
		}
	}
	if err := Write(p, 0o600, fill(true)); !errors.Is(err, boom) {
		t.Fatalf("err %v, want boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old page" {
		t.Errorf("after a failed fill the file holds %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}
	if err := Write(p, 0o600, fill(false)); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "half a new page" {
		t.Errorf("after a good fill the file holds %q", b)
	}
}
