package harness

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestWorkspacesOpenOnceAndClose: two surfaces built on one directory share
// one opened root, and Close releases it (a read through it then fails).
func TestWorkspacesOpenOnceAndClose(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello"), 0o600); err != nil {
		t.Fatal(err)
	}
	var wss Workspaces
	a, err := wss.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wss.Open(dir); err != nil || len(wss.open) != 1 {
		t.Fatalf("second open: %v, %d open", err, len(wss.open))
	}
	env := &World{Err: io.Discard}
	rc := transcript.Config{Workspace: dir, PermissionMode: "yes", Sandbox: "none", SandboxNetwork: true}
	reg, _, err := BuildTools(env, &wss, rc, ToolSetup{Only: []string{"fs_read"}})
	if err != nil {
		t.Fatal(err)
	}
	read, _ := reg.Get("fs_read")
	if res, err := read.Run(context.Background(), []byte(`{"path":"a.txt"}`)); err != nil || !strings.Contains(res.Content, "hello") {
		t.Fatalf("read before close: %+v %v", res, err)
	}
	if err := wss.Close(); err != nil {
		t.Fatal(err)
	}
	if res, err := builtin.NewFSRead(a, builtin.Options{}).Run(context.Background(), []byte(`{"path":"a.txt"}`)); err == nil && !res.IsError {
		t.Errorf("a read through a closed workspace succeeded: %+v", res)
	}
}
