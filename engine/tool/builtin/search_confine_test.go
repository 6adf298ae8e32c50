package builtin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// searchEscapeFixture is a workspace with symbolic links that lead out of
// it, each to a canary: etc (absolute, to /etc, whose passwd holds the
// line of root), up (relative, "../outside"), abs (absolute, to outside),
// and sub/deep (relative, climbing two levels, to outside); and a plain
// file inside.
func searchEscapeFixture(t *testing.T) (Workspace, string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	root, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	writeFiles(t, root, map[string]string{"inside.txt": "inside\n", "sub/x.txt": "x\n"})
	writeFiles(t, outside, map[string]string{"secret.txt": canary + " secret\n", canary + "-name.txt": ""})
	symlink(t, "/etc", filepath.Join(root, "etc"))
	symlink(t, "../outside", filepath.Join(root, "up"))
	symlink(t, outside, filepath.Join(root, "abs"))
	symlink(t, "../../outside", filepath.Join(root, "sub", "deep"))
	ws, err := NewWorkspace(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	return ws, root
}

// TestSearchEscapes: every way of pointing fs_grep and fs_glob out of the
// workspace through a symbolic link, an absolute path or "..", is refused,
// and a walk of the whole workspace lists the links without following
// them. The control: the same paths, read by grep and cat in a plain
// shell in the workspace, do reach the canaries and /etc/passwd.
func TestSearchEscapes(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/etc/passwd"); err != nil {
		t.Skip("no /etc/passwd to aim at")
	}
	ws, root := searchEscapeFixture(t)

	t.Run("control: a shell reaches the targets", func(t *testing.T) {
		t.Parallel()
		for _, cmd := range []string{
			"grep -n '^root:' etc/passwd",
			"grep -rn '^root:' etc/",
			"cat up/secret.txt",
			"cat abs/secret.txt",
			"grep -rn " + canary + " sub/deep/",
			"grep -Rn " + canary + " .",
			"ls sub/deep/",
		} {
			c := exec.Command("/bin/sh", "-c", cmd)
			c.Dir = root
			out, _ := c.CombinedOutput()
			if !strings.Contains(string(out), canary) && !strings.Contains(string(out), "root:") {
				t.Errorf("%s: %q reaches nothing: the attack proves nothing", cmd, out)
			}
		}
	})

	refusals := []struct {
		tool  string
		input map[string]any
	}{
		{NameFSGrep, map[string]any{"pattern": "^root:", "path": "etc/passwd"}},
		{NameFSGrep, map[string]any{"pattern": "^root:", "path": "etc"}},
		{NameFSGrep, map[string]any{"pattern": "^root:", "path": "/etc"}},
		{NameFSGrep, map[string]any{"pattern": "^root:", "path": "/etc/passwd"}},
		{NameFSGrep, map[string]any{"pattern": canary, "path": "up"}},
		{NameFSGrep, map[string]any{"pattern": canary, "path": "up/secret.txt"}},
		{NameFSGrep, map[string]any{"pattern": canary, "path": "abs"}},
		{NameFSGrep, map[string]any{"pattern": canary, "path": "sub/deep"}},
		{NameFSGrep, map[string]any{"pattern": canary, "path": "../outside"}},
		{NameFSGrep, map[string]any{"pattern": canary, "path": "sub/../../outside/secret.txt"}},
		{NameFSGrep, map[string]any{"pattern": canary, "path": root + "/../outside"}},
		{NameFSGlob, map[string]any{"pattern": "*", "path": "etc"}},
		{NameFSGlob, map[string]any{"pattern": "**", "path": "/etc"}},
		{NameFSGlob, map[string]any{"pattern": "*", "path": "up"}},
		{NameFSGlob, map[string]any{"pattern": "*", "path": "sub/deep"}},
		{NameFSGlob, map[string]any{"pattern": "*", "path": "../outside"}},
		{NameFSGlob, map[string]any{"pattern": "etc/passwd"}},
		{NameFSGlob, map[string]any{"pattern": "up/*"}},
		{NameFSGlob, map[string]any{"pattern": "sub/deep/**"}},
	}
	for _, r := range refusals {
		in := mustJSON(t, r.input)
		t.Run(r.tool+" "+in, func(t *testing.T) {
			t.Parallel()
			res := run(t, toolNamed(t, ws, r.tool), in)
			if !res.IsError || !strings.Contains(res.Content, "is outside the workspace") {
				t.Errorf("result = %+v, want a refusal", res)
			}
			if strings.Contains(res.Content, canary) || strings.Contains(res.Content, "root:") || strings.Contains(res.Content, "passwd") && r.tool == NameFSGlob {
				t.Errorf("the result shows what is outside: %q", res.Content)
			}
		})
	}

	walks := []struct {
		tool, input, want string
	}{
		{NameFSGrep, `{"pattern":"^root:|` + canary + `"}`, "[no matches]"},
		{NameFSGrep, `{"pattern":"."}`, "inside.txt:1:inside\nsub/x.txt:1:x\n[2 matching lines in 2 files]"},
		{NameFSGlob, `{"pattern":"**"}`, "abs\netc\ninside.txt\nsub/\nsub/deep\nsub/x.txt\nup\n"},
		{NameFSGlob, `{"pattern":"**/*` + canary + `*"}`, "[no matches]"},
		{NameFSGlob, `{"pattern":"**/passwd"}`, "[no matches]"},
	}
	for _, w := range walks {
		t.Run(w.tool+" walks "+w.input, func(t *testing.T) {
			t.Parallel()
			res := run(t, toolNamed(t, ws, w.tool), w.input)
			if res.IsError || res.Content != w.want {
				t.Errorf("result = %+v, want %q", res, w.want)
			}
		})
	}
}
