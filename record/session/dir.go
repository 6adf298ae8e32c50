package session

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mecha-agent/mecha/internal/atomicfile"
)

// ensureDir creates dir owner-only if it does not exist. An existing
// directory is left as its owner set it.
func ensureDir(dir string) error {
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
	return syncDir(filepath.Dir(dir))
}

// syncDir fsyncs a directory so that a file just created in it survives a
// crash of the machine.
func syncDir(dir string) error {
	if err := atomicfile.SyncDir(dir); err != nil {
		return fmt.Errorf("session: sync dir %s: %w", dir, err)
	}
	return nil
}
