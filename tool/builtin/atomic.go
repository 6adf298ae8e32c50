package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// newFileMode is the mode of a file fs_write creates.
const newFileMode fs.FileMode = 0o644

// writeAtomic replaces the file at path (an absolute, resolved path) with
// data: it writes a temporary file in the same directory, syncs it, gives
// it the mode of the file it replaces (newFileMode for a new file) and
// renames it over path, so that a reader sees the old content or the new,
// never a mix. Parent directories are created. It reports whether the file
// existed. Ownership and hard links of a replaced file are not preserved.
func writeAtomic(path string, data []byte) (existed bool, err error) {
	mode := newFileMode
	fi, err := os.Stat(path)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		if fi.IsDir() {
			return false, errors.New("is a directory")
		}
		return false, errors.New("is not a regular file")
	case err == nil:
		existed = true
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return false, err
	}
	if err := tmp.Chmod(mode); err != nil {
		return false, err
	}
	if err := tmp.Sync(); err != nil {
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		committed = true // closed and removed already
		return false, err
	}
	committed = true
	syncDir(dir)
	return existed, nil
}

// syncDir makes a rename in dir durable. Failure is not reported: some file
// systems cannot sync a directory, and the data itself is already synced.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// pathErr renders an OS error about a path for the model without repeating
// the resolved absolute path: `a.txt: permission denied`.
func pathErr(rel string, err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return fmt.Sprintf("%s: %v", rel, err)
}
