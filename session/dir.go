package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// DefaultDir returns where sessions live: $MECHA_SESSION_DIR, else
// $MECHA_HOME/sessions, else ~/.mecha/sessions. getenv nil means os.Getenv.
func DefaultDir(getenv func(string) string) (string, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	if d := getenv("MECHA_SESSION_DIR"); d != "" {
		return filepath.Abs(d)
	}
	if h := getenv("MECHA_HOME"); h != "" {
		return filepath.Abs(filepath.Join(h, "sessions"))
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", errors.New("session: no home directory: set MECHA_SESSION_DIR")
		}
	}
	return filepath.Join(home, ".mecha", "sessions"), nil
}

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
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("session: sync dir: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("session: sync dir %s: %w", dir, err)
	}
	return nil
}
