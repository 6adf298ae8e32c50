package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mecha-agent/mecha/internal/safeopen"
)

func TestProjectInstructions(t *testing.T) {
	t.Parallel()
	t.Run("none", func(t *testing.T) {
		name, text, err := projectInstructions(t.TempDir())
		if name != "" || text != "" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("AGENTS.md before CLAUDE.md", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "AGENTS.md"), "\nagents\n")
		write(t, filepath.Join(ws, "CLAUDE.md"), "claude")
		if name, text, err := projectInstructions(ws); name != "AGENTS.md" || text != "agents" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("CLAUDE.md when there is no AGENTS.md", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "CLAUDE.md"), "claude")
		if name, text, err := projectInstructions(ws); name != "CLAUDE.md" || text != "claude" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("a link inside the workspace is followed", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "docs", "agents.md"), "inside")
		if err := os.Symlink("docs/agents.md", filepath.Join(ws, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		if name, text, err := projectInstructions(ws); name != "AGENTS.md" || text != "inside" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("over 256 KiB", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "AGENTS.md"), strings.Repeat("x", maxInstructions+1))
		if _, _, err := projectInstructions(ws); !errors.Is(err, safeopen.ErrTooLarge) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		ws := t.TempDir()
		if err := os.Mkdir(filepath.Join(ws, "AGENTS.md"), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := projectInstructions(ws); !errors.Is(err, safeopen.ErrNotRegular) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("a FIFO is refused without waiting for a writer", func(t *testing.T) {
		ws := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := projectInstructions(ws); !errors.Is(err, safeopen.ErrNotRegular) {
			t.Errorf("err %v", err)
		}
	})
}

// TestProjectInstructionsLinkOut: a link from AGENTS.md or CLAUDE.md out of
// the workspace is refused, where the same link opened unconfined reaches
// the secret.
func TestProjectInstructionsLinkOut(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"abs", "../secret", "sub/../../secret"} {
		t.Run("a link out of the workspace is refused: "+target, func(t *testing.T) {
			top := t.TempDir()
			secret := filepath.Join(top, "secret")
			write(t, secret, "PRIVATE KEY")
			ws := filepath.Join(top, "ws")
			if target == "abs" {
				target = secret
			}
			write(t, filepath.Join(ws, "sub", "README"), "")
			if err := os.Symlink(target, filepath.Join(ws, "CLAUDE.md")); err != nil {
				t.Fatal(err)
			}
			name, text, err := projectInstructions(ws)
			if err == nil || strings.Contains(text, "PRIVATE") || !strings.Contains(err.Error(), "--no-project-instructions") {
				t.Errorf("%q %q %v", name, text, err)
			}
			// The control: opened by its path, unconfined, the link does
			// lead to the secret.
			if b, err := safeopen.ReadFile(filepath.Join(ws, "CLAUDE.md"), maxInstructions); err != nil || string(b) != "PRIVATE KEY" {
				t.Errorf("the link does not reach the secret: %q %v", b, err)
			}
		})
	}
}

// write writes text to path, making its directory.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
