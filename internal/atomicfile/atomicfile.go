// Package atomicfile replaces files so that a reader, or a machine that
// crashes, sees the old content or the new and never a mix: write a
// temporary file beside the target, sync it, rename it over the target,
// sync the directory.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFile replaces the file at path with data. A new file gets perm less
// the umask, as os.WriteFile would give it.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return Write(path, perm, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// Write replaces the file at path with what fill writes, streamed into the
// temporary file: nothing needs to be held whole. When fill fails the
// target is left as it was and fill's error returned. A new file gets perm
// less the umask.
func Write(path string, perm fs.FileMode, fill func(io.Writer) error) error {
	dir := filepath.Dir(path)
	tmp, err := createTemp(dir, "."+filepath.Base(path)+".tmp-", perm)
	if err != nil {
		return err
	}
	werr := fill(tmp)
	if werr == nil {
		werr = tmp.Sync()
	}
	if err := errors.Join(werr, tmp.Close()); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return SyncDir(dir)
}

// createTemp is os.CreateTemp with a mode: the kernel applies the umask
// to perm, which os.CreateTemp's fixed 0600 would not let through.
func createTemp(dir, prefix string, perm fs.FileMode) (*os.File, error) {
	for range 100 {
		name := filepath.Join(dir, prefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: filepath.Join(dir, prefix+"*"), Err: fs.ErrExist}
}

// SyncDir fsyncs a directory, so that a file created or renamed in it
// survives a crash of the machine.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
