package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
)

// testWorkspace returns a workspace in a fresh temporary directory and its
// resolved root.
func testWorkspace(t *testing.T) (Workspace, string) {
	t.Helper()
	ws, err := NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return ws, ws.Root()
}

// writeFiles creates files (path relative to dir -> content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// run calls tl with input and fails the test on a Go error.
func run(t *testing.T, tl tool.Tool, input string) tool.Result {
	t.Helper()
	res, err := tl.Run(context.Background(), json.RawMessage(input))
	if err != nil {
		t.Fatalf("%s.Run(%s): unexpected error %v", tl.Spec().Name, input, err)
	}
	return res
}

// mustJSON encodes v as a tool input.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolNamed returns the built-in tool called name, on ws.
func toolNamed(t *testing.T, ws Workspace, name string) tool.Tool {
	t.Helper()
	for _, tl := range All(ws, Options{}) {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %s", name)
	return nil
}
