// Package inspecttest gives tests the UK AISI's Inspect (inspect_ai) to
// read the eval logs mecha writes with Inspect's own reader: a Python
// virtual environment with inspect-ai installed from the Python package
// index, made once per machine in the user's cache directory and reused.
// A test that cannot have it (no python3, no venv module, an index that
// cannot be reached) skips, saying why; it never fails for that (tests
// only).
package inspecttest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// installTimeout bounds making the environment: inspect-ai and its
// dependencies are about 150 MB.
const installTimeout = 10 * time.Minute

var (
	once   sync.Once
	python string // the environment's python, "" when none could be made
	reason string // why not
)

// Python returns the python of an environment where inspect_ai imports,
// making it the first time, or skips the test with the reason it cannot
// be made.
func Python(t testing.TB) string {
	t.Helper()
	once.Do(func() { python, reason = ensure() })
	if python == "" {
		t.Skipf("inspect-ai cannot be installed here, so Inspect's reader cannot check the log: %s", reason)
	}
	return python
}

// Dir is where the environment lives: $MECHA_INSPECT_VENV, else
// <user cache dir>/mecha-test/inspect-ai.
func Dir() (string, error) {
	if d := os.Getenv("MECHA_INSPECT_VENV"); d != "" {
		return d, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(cache, "mecha-test", "inspect-ai"), nil
}

// ensure returns the environment's python, making it when it is missing
// or unfinished: a marker file is written once inspect_ai imports, and a
// directory without it (a run cut short) is made again.
func ensure() (string, string) {
	dir, err := Dir()
	if err != nil {
		return "", err.Error()
	}
	py, done := filepath.Join(dir, "bin", "python"), filepath.Join(dir, ".mecha-ready")
	if _, err := os.Stat(done); err == nil && works(py) {
		return py, ""
	}
	sys, err := exec.LookPath("python3")
	if err != nil {
		return "", "no python3 on PATH"
	}
	if err := os.RemoveAll(dir); err != nil {
		return "", err.Error()
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", err.Error()
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	if out, err := run(ctx, sys, "-m", "venv", dir); err != nil {
		return "", fmt.Sprintf("python3 -m venv: %v: %s", err, tail(out))
	}
	pip := filepath.Join(dir, "bin", "pip")
	if out, err := run(ctx, pip, "install", "--disable-pip-version-check", "--quiet", "inspect-ai"); err != nil {
		return "", fmt.Sprintf("pip install inspect-ai: %v: %s", err, tail(out))
	}
	if !works(py) {
		return "", "inspect_ai does not import after installing it"
	}
	if err := os.WriteFile(done, nil, 0o644); err != nil {
		return "", err.Error()
	}
	return py, ""
}

// works reports whether py imports inspect_ai.
func works(py string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, err := run(ctx, py, "-c", "import inspect_ai.log")
	return err == nil
}

func run(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

// tail is the last lines of a command's output, for a reason.
func tail(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 3 {
		lines = lines[len(lines)-3:]
	}
	return strings.Join(lines, " / ")
}
