// Package workdir names workspaces: the directory -w gives made absolute
// and checked, and the one comparison of a recorded workspace with a
// directory (absolute, clean, symbolic links resolved) that --continue and
// sessions list -w share.
package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Dir resolves -w (or the current directory, for "") to an absolute,
// existing directory.
func Dir(arg string) (string, error) {
	if arg == "" {
		arg = "."
	}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("workspace: %w", err)
	}
	if !st.IsDir() {
		return "", fmt.Errorf("workspace: %s is not a directory", abs)
	}
	return abs, nil
}

// Same returns a test of whether a workspace recorded in a
// session's header is dir: both made absolute and clean, and symbolic
// links resolved where the path still exists (a recorded workspace that
// is gone is compared as it was written). Each recorded path is resolved
// once; the test is safe for concurrent use. dir need not exist.
func Same(dir string) (func(recorded string) bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	want := Canonical(abs)
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	return func(recorded string) bool {
		if recorded == "" || !filepath.IsAbs(recorded) {
			return false
		}
		c := filepath.Clean(recorded)
		if c == want || c == abs {
			return true
		}
		mu.Lock()
		defer mu.Unlock()
		same, ok := seen[c]
		if !ok {
			same = Canonical(c) == want
			seen[c] = same
		}
		return same
	}, nil
}

// Canonical is a workspace path as it is compared: clean, its symbolic
// links resolved (left as it is where they cannot be: a workspace since
// removed). "" stays "".
func Canonical(p string) string {
	if p == "" {
		return ""
	}
	p = filepath.Clean(p)
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
