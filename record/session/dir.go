package session

import (
	"fmt"
	"os"
	"path/filepath"
)

// ensureDir creates dir owner-only if it does not exist, and fsyncs its
// parent (with fsync, nil: the real one) when it did. An existing
// directory is left as its owner set it.
func ensureDir(dir string, fsync func(*os.File) error) error {
	st, err := os.Stat(dir)
	if err == nil {
		if !st.IsDir() {
			return fmt.Errorf("session: %s is not a directory", dir)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	// MkdirAll's mode is filtered by the umask, which can only remove bits;
	// set it explicitly anyway so the result never depends on the umask.
	if err := os.Chmod(dir, 0o700); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return syncDir(filepath.Dir(dir), fsync)
}

// syncDir fsyncs a directory (with fsync, nil: the real one) so that a
// file just created in it survives a crash of the machine.
func syncDir(dir string, fsync func(*os.File) error) error {
	d, err := os.Open(dir)
	if err == nil {
		err = fsyncWith(fsync, d)
		d.Close()
	}
	if err != nil {
		return fmt.Errorf("session: sync dir %s: %w", dir, err)
	}
	return nil
}
