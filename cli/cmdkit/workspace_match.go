package cmdkit

import (
	"path/filepath"
	"sync"
)

// SameWorkspace returns a test of whether a workspace recorded in a
// session's header is dir: both made absolute and clean, and symbolic
// links resolved where the path still exists (a recorded workspace that
// is gone is compared as it was written). Each recorded path is resolved
// once; the test is safe for concurrent use. dir need not exist.
func SameWorkspace(dir string) (func(recorded string) bool, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	want := resolvePath(abs)
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
			same = resolvePath(c) == want
			seen[c] = same
		}
		return same
	}, nil
}

// resolvePath is the clean path with symbolic links resolved, or the clean
// path when it cannot be resolved.
func resolvePath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}
