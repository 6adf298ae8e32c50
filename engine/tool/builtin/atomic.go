package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// newFileMode is the mode a file fs_write creates is asked for; the kernel
// takes the umask off it, as it does for any program's new file.
const newFileMode fs.FileMode = 0o666

// writeAtomic replaces the file name (relative to the workspace root, with
// no symbolic link in its last element: see Workspace.target) with data:
// it writes a temporary file in the same directory, syncs it, gives it the
// mode of the file it replaces (newFileMode less the umask for a new file,
// applied by the kernel as the temporary file is created) and renames it
// over name, so that a reader sees the old content or the new, never a mix.
// Parent directories are created. The directory is opened once, through the
// root, and the temporary file is created, renamed and (on failure) removed
// by its name in that open directory, so that a directory swapped meanwhile
// can neither split them nor leave the temporary file behind. It reports
// whether the file existed. Ownership and hard links of a replaced file are
// not preserved.
func (w Workspace) writeAtomic(name string, data []byte) (existed bool, err error) {
	var keep *fs.FileMode // the mode of the file replaced
	fi, err := w.fs.Stat(name)
	switch {
	case err == nil && !fi.Mode().IsRegular():
		if fi.IsDir() {
			return false, errors.New("is a directory")
		}
		return false, errors.New("is not a regular file")
	case err == nil:
		existed = true
		mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		keep = &mode
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	dirName, base := parent(name), filepath.Base(name)
	if base == "." || base == ".." {
		return false, errors.New("is a directory")
	}
	if err := w.fs.MkdirAll(dirName, 0o755); err != nil {
		return false, err
	}
	dir, err := w.fs.OpenRoot(dirName)
	if err != nil {
		return false, err
	}
	defer dir.Close()
	perm := newFileMode
	if keep != nil {
		perm = 0o600 // until it is given the mode it keeps
	}
	tmp, tmpName, err := createTemp(dir, "."+base+".tmp-", perm)
	if err != nil {
		return false, err
	}
	committed := false
	defer func() {
		if !committed {
			_ = tmp.Close()
			_ = dir.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return false, err
	}
	// On the descriptor: os.Root.Chmod follows a link swapped in meanwhile.
	if keep != nil {
		if err := tmp.Chmod(*keep); err != nil {
			return false, err
		}
	}
	if err := tmp.Sync(); err != nil {
		return false, err
	}
	if err := tmp.Close(); err != nil {
		return false, err
	}
	if err := dir.Rename(tmpName, base); err != nil {
		_ = dir.Remove(tmpName)
		committed = true // closed and removed already
		return false, err
	}
	committed = true
	syncDir(dir)
	return existed, nil
}

// createTemp creates a new file in the directory of dir named prefix and a
// random number, like os.CreateTemp, which os.Root lacks; unlike it, the
// file is created with perm less the umask.
func createTemp(dir *os.Root, prefix string, perm fs.FileMode) (*os.File, string, error) {
	for try := 0; ; try++ {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		f, err := dir.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, name, err
	}
}

// syncDir makes a rename in dir durable. Failure is not reported: some file
// systems cannot sync a directory, and the data itself is already synced.
func syncDir(dir *os.Root) {
	d, err := dir.Open(".")
	if err != nil {
		return
	}
	_ = d.Sync()
	_ = d.Close()
}

// pathErr renders an OS error about a path for the model without repeating
// the name it was given to the OS: `a.txt: permission denied`.
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
