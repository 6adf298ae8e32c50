package safeopen

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

// TestReadFileIn: inside a root, a regular file and a link that stays in
// are read; a link out of the root (the attack) is refused though the same
// path read by ReadFile reaches the file (the control); a FIFO is refused
// without waiting for a writer, and a file over the limit too.
func TestReadFileIn(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	dir := filepath.Join(top, "root")
	for path, text := range map[string]string{filepath.Join(top, "outside"): "secret", filepath.Join(dir, "in"): "inside"} {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"up": "../outside", "abs": filepath.Join(top, "outside"), "stay": "in"} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"in", "stay"} {
		if b, err := ReadFileIn(root, name, 100); string(b) != "inside" || err != nil {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	for _, name := range []string{"up", "abs", "../outside"} {
		if b, err := ReadFileIn(root, name, 100); err == nil || len(b) > 0 {
			t.Errorf("%s: read %q out of the root", name, b)
		}
		if name != "../outside" {
			if b, err := ReadFile(filepath.Join(dir, name), 100); string(b) != "secret" || err != nil {
				t.Errorf("control %s: %q %v", name, b, err)
			}
		}
	}
	if _, err := ReadFileIn(root, "fifo", 100); !errors.Is(err, ErrNotRegular) {
		t.Errorf("fifo: %v", err)
	}
	if _, err := ReadFileIn(root, "in", 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("over the limit: %v", err)
	}
}
