package regular

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestRefusesWhatIsNotARegularFile: a FIFO (which would block a plain open
// until a writer came), a symlink to one, a device and a directory are
// refused at once; a regular file, and a symlink to one, are read.
func TestRefusesWhatIsNotARegularFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a named pipe", link: "a named pipe", "/dev/zero": "a character device", dir: "a directory"} {
		_, err := ReadFile(path, 1<<20)
		if !errors.Is(err, ErrNotRegular) || err.Error() != "open "+path+": not a regular file ("+kind+")" {
			t.Errorf("ReadFile(%s) = %v", path, err)
		}
		if f, err := Open(path); !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(%s) = %v, %v", path, f, err)
		}
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link+"2"); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link + "2"} {
		if b, err := ReadFile(p, 5); err != nil || string(b) != "hello" {
			t.Errorf("ReadFile(%s) = %q, %v", p, b, err)
		}
	}
	if _, err := ReadFile(file, 4); !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadFile over the limit = %v", err)
	}
	if _, err := ReadFile(filepath.Join(dir, "missing"), 5); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file = %v", err)
	}
}
