package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
)

// TestProtectMechaHome: with mecha's home inside the workspace (mecha run
// from ~), the file tools refuse every path into it, written plainly,
// absolutely, or through a symbolic link inside the workspace, and the
// searches do not walk into it; the control, the same workspace
// unprotected, lets each call through.
func TestProtectMechaHome(t *testing.T) {
	t.Parallel()
	calls := []struct {
		name  string
		tool  func(Workspace) tool.Tool
		input func(root string) string
		// hit tells the call reached mecha's home.
		hit func(root, content string) bool
	}{
		{"fs_write config.toml", func(ws Workspace) tool.Tool { return NewFSWrite(ws, Options{}) },
			func(string) string {
				return `{"path":".mecha/config.toml","content":"[mcp.servers.x]\ncommand = \"/bin/sh\"\n"}`
			},
			func(root, _ string) bool { return fileHas(root, ".mecha/config.toml", "mcp.servers.x") }},
		{"fs_write through a link", func(ws Workspace) tool.Tool { return NewFSWrite(ws, Options{}) },
			func(string) string { return `{"path":"m/config.toml","content":"forged"}` },
			func(root, _ string) bool { return fileHas(root, ".mecha/config.toml", "forged") }},
		{"fs_write absolute", func(ws Workspace) tool.Tool { return NewFSWrite(ws, Options{}) },
			func(root string) string {
				return `{"path":"` + filepath.Join(root, ".mecha", "learned_rules.md") + `","content":"forged"}`
			},
			func(root, _ string) bool { return fileHas(root, ".mecha/learned_rules.md", "forged") }},
		{"fs_edit a session", func(ws Workspace) tool.Tool { return NewFSEdit(ws, Options{}) },
			func(string) string {
				return `{"path":".mecha/sessions/s.jsonl","old_string":"private","new_string":"clean"}`
			},
			func(root, _ string) bool { return fileHas(root, ".mecha/sessions/s.jsonl", "clean") }},
		{"fs_read a session", func(ws Workspace) tool.Tool { return NewFSRead(ws, Options{}) },
			func(string) string { return `{"path":".mecha/sessions/s.jsonl"}` },
			func(_, content string) bool { return strings.Contains(content, "canary") }},
		{"fs_grep the workspace", func(ws Workspace) tool.Tool { return NewFSGrep(ws, Options{}) },
			func(string) string { return `{"pattern":"canary"}` },
			func(_, content string) bool { return strings.Contains(content, "canary") }},
		{"fs_glob the workspace", func(ws Workspace) tool.Tool { return NewFSGlob(ws, Options{}) },
			func(string) string { return `{"pattern":"**/*.jsonl"}` },
			func(_, content string) bool { return strings.Contains(content, "s.jsonl") }},
		{"fs_list mecha's home", func(ws Workspace) tool.Tool { return NewFSList(ws, Options{}) },
			func(string) string { return `{"path":".mecha"}` },
			func(_, content string) bool { return strings.Contains(content, "config.toml") }},
	}
	for _, c := range calls {
		for _, protect := range []bool{true, false} {
			ws, root := testWorkspace(t)
			writeFiles(t, root, map[string]string{
				".mecha/config.toml":      "default_provider = \"mock\"\n",
				".mecha/sessions/s.jsonl": "{\"private\": \"canary\"}\n",
				".mecha/learned_rules.md": "- a rule\n",
				"src/main.go":             "package main\n",
			})
			symlink(t, ".mecha", filepath.Join(root, "m"))
			if protect {
				ws = ws.Protect(filepath.Join(root, ".mecha"))
			}
			res := run(t, c.tool(ws), c.input(root))
			if got := c.hit(root, res.Content); got == protect {
				t.Errorf("%s, protected %v: reached mecha's home %v\n%s", c.name, protect, got, res.Content)
			}
			if protect && !strings.Contains(res.Content, "$MECHA_HOME") && (c.name != "fs_grep the workspace" && c.name != "fs_glob the workspace") {
				t.Errorf("%s: the refusal does not say why: %s", c.name, res.Content)
			}
		}
	}
}

func fileHas(root, name, s string) bool {
	b, _ := os.ReadFile(filepath.Join(root, name))
	return strings.Contains(string(b), s)
}
