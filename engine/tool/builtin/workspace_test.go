package builtin

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// escapeFixture is a workspace with links in and out of it, and a directory
// outside it.
func escapeFixture(t *testing.T) (ws Workspace, root, outside string) {
	t.Helper()
	ws, root = testWorkspace(t)
	outside, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, root, map[string]string{"a.txt": "a\n", "sub/b.txt": "b\n"})
	writeFiles(t, outside, map[string]string{"secret.txt": "secret\n"})
	symlink(t, "/", filepath.Join(root, "linkroot"))
	symlink(t, outside, filepath.Join(root, "linkout"))
	symlink(t, "sub", filepath.Join(root, "linkin"))
	symlink(t, filepath.Join(outside, "new.txt"), filepath.Join(root, "dangling"))
	symlink(t, "fresh.txt", filepath.Join(root, "danglingin"))
	symlink(t, "loop", filepath.Join(root, "loop"))
	symlink(t, "../../..", filepath.Join(root, "sub", "up"))
	return ws, root, outside
}

// stat looks p up the way the file tools do: mapped by name, then through
// the root.
func stat(ws Workspace, p string) (os.FileInfo, error) {
	name, err := ws.name(p)
	if err != nil {
		return nil, err
	}
	fi, err := ws.fs.Stat(name)
	if pe := refused(p, err); pe != nil {
		return nil, pe
	}
	return fi, err
}

func TestWorkspacePaths(t *testing.T) {
	t.Parallel()
	ws, root, outside := escapeFixture(t)
	tests := []struct {
		path    string
		want    string // the file it names, relative to root, when allowed
		wantErr string // a substring of the error, when refused
	}{
		{path: "a.txt", want: "a.txt"},
		{path: "./sub/b.txt", want: "sub/b.txt"},
		{path: ".", want: "."},
		{path: "sub/", want: "sub"},
		{path: "sub/../a.txt", want: "a.txt"},
		{path: root + "/a.txt", want: "a.txt"},
		{path: root + "//sub/b.txt", want: "sub/b.txt"},
		{path: root, want: "."},
		{path: root + "/", want: "."},
		{path: root + "//", want: "."},
		{path: "linkin/b.txt", want: "sub/b.txt"},
		{path: "linkin/../a.txt", want: "a.txt"}, // ".." after a link climbs from its target

		{path: "", wantErr: `path "" is empty`},
		{path: "a\x00b", wantErr: "NUL"},
		{path: "../x", wantErr: `path "../x" is outside the workspace`},
		{path: "a/../../x", wantErr: `path "a/../../x" is outside the workspace`},
		{path: "..", wantErr: `path ".." is outside the workspace`},
		{path: "/etc/passwd", wantErr: `path "/etc/passwd" is outside the workspace`},
		{path: "/", wantErr: `path "/" is outside the workspace`},
		{path: outside + "/secret.txt", wantErr: "is outside the workspace"},
		{path: root + "/../x", wantErr: "is outside the workspace"},
		{path: root + "x/a.txt", wantErr: "is outside the workspace"}, // a sibling sharing the prefix
		{path: "linkroot", wantErr: `path "linkroot" ` + reasonLink},
		{path: "linkroot/etc/passwd", wantErr: `path "linkroot/etc/passwd" ` + reasonLink},
		{path: "linkout/secret.txt", wantErr: `path "linkout/secret.txt" is outside the workspace`},
		{path: "linkout/new.txt", wantErr: `path "linkout/new.txt" is outside the workspace`},
		{path: "linkout/deep/er/new.txt", wantErr: "is outside the workspace"},
		{path: "dangling", wantErr: `path "dangling" is outside the workspace`},
		{path: "sub/up", wantErr: "is outside the workspace"},
		{path: "sub/up/etc", wantErr: "is outside the workspace"},
		{path: "loop/x", wantErr: "too many levels of symbolic links"},
		// The kernel's answers, not the old resolver's (which took a
		// missing element literally): refused all the same.
		{path: "nope/../linkout/x", wantErr: "no such file or directory"},
		{path: "a.txt/../linkout/x", wantErr: "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			t.Parallel()
			fi, err := stat(ws, tt.path)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("stat(%q) = %v, %v; want error containing %q", tt.path, fi, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("stat(%q): %v", tt.path, err)
			}
			want, err := os.Stat(filepath.Join(root, tt.want))
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(fi, want) {
				t.Errorf("%q names %v, want %s", tt.path, fi.Name(), tt.want)
			}
		})
	}
}

// TestEscapeIsRecognised pins the text of os.Root's unexported escape error,
// which escapes matches.
func TestEscapeIsRecognised(t *testing.T) {
	t.Parallel()
	ws, root, _ := escapeFixture(t)
	for _, name := range []string{"linkout/secret.txt", "linkroot", "sub/up"} {
		_, err := ws.fs.Stat(name)
		if !escapes(err) {
			t.Errorf("os.Root Stat(%q) error = %v, not recognised as an escape", name, err)
		}
	}
	// The guard off: the same names, opened without the root, do get out.
	if _, err := os.Stat(filepath.Join(root, "linkout/secret.txt")); err != nil {
		t.Errorf("the fixture does not escape: %v", err)
	}
	if escapes(os.ErrNotExist) {
		t.Error("ErrNotExist taken for an escape")
	}
}

func TestNewWorkspace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	writeFiles(t, real, map[string]string{"ws/a.txt": "a", "file": "x"})
	symlink(t, filepath.Join(real, "ws"), filepath.Join(real, "link"))

	t.Run("symlinked root", func(t *testing.T) {
		t.Parallel()
		ws, err := NewWorkspace(filepath.Join(real, "link") + "/")
		if err != nil {
			t.Fatal(err)
		}
		if ws.Root() != filepath.Join(real, "ws") || ws.Dir() != filepath.Join(real, "link") {
			t.Errorf("Root() = %q, Dir() = %q", ws.Root(), ws.Dir())
		}
		defer ws.Close()
		want, err := os.Stat(filepath.Join(real, "ws", "a.txt"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"a.txt", filepath.Join(real, "link", "a.txt"), filepath.Join(real, "ws", "a.txt")} {
			fi, err := stat(ws, p)
			if err != nil || !os.SameFile(fi, want) {
				t.Errorf("stat(%q) = %v, %v", p, fi, err)
			}
		}
		if _, err := stat(ws, filepath.Join(real, "file")); err == nil {
			t.Error("a sibling of the workspace was found")
		}
	})
	for _, tt := range []struct{ name, dir, wantErr string }{
		{"relative", "ws", `builtin: workspace "ws" is not an absolute path`},
		{"missing", filepath.Join(real, "nope"), "builtin: workspace: "},
		{"file", filepath.Join(real, "file"), "is not a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewWorkspace(tt.dir)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("NewWorkspace(%q) error = %v, want %q", tt.dir, err, tt.wantErr)
			}
		})
	}
	t.Run("zero value", func(t *testing.T) {
		t.Parallel()
		if _, err := (Workspace{}).name("a"); err == nil {
			t.Error("zero Workspace mapped a path")
		}
		for _, tl := range All(Workspace{}, Options{}) {
			var in string
			switch tl.Spec().Name {
			case NameFSRead, NameFSList:
				in = `{"path":"a"}`
			case NameFSWrite:
				in = `{"path":"a","content":""}`
			case NameFSEdit:
				in = `{"path":"a","old_string":"a","new_string":"b"}`
			case NameFSGrep, NameFSGlob:
				in = `{"path":"a","pattern":"a"}`
			case NameShell:
				in = `{"command":"true"}`
			case NameWebFetch:
				continue // uses no workspace
			}
			if _, err := tl.Run(context.Background(), []byte(in)); err == nil {
				t.Errorf("%s ran in a zero Workspace", tl.Spec().Name)
			}
		}
	})
}

// TestToolsRefuseEscapes runs every file tool against every escape and
// checks that the result is a tool error naming the path and that nothing
// outside changed.
func TestToolsRefuseEscapes(t *testing.T) {
	t.Parallel()
	ws, _, outside := escapeFixture(t)
	tools := All(ws, Options{})
	escapes := []string{"../x", "a/../../x", "/etc/passwd", outside + "/secret.txt", "linkroot/etc/passwd", "linkout/secret.txt", "linkout/new.txt", "linkout/newdir/new.txt", "dangling"}
	for _, tl := range tools[:6] { // the file tools
		for _, p := range escapes {
			t.Run(tl.Spec().Name+" "+p, func(t *testing.T) {
				t.Parallel()
				in := map[string]any{"path": p}
				switch tl.Spec().Name {
				case NameFSWrite:
					in["content"] = "pwned"
				case NameFSEdit:
					in["old_string"], in["new_string"] = "secret", "pwned"
				case NameFSGrep, NameFSGlob:
					in["pattern"] = "secret"
				}
				res, err := tl.Run(context.Background(), []byte(mustJSON(t, in)))
				if err != nil {
					t.Fatal(err)
				}
				if !res.IsError || !strings.Contains(res.Content, "is outside the workspace") || !strings.Contains(res.Content, p) {
					t.Errorf("result = %+v; want an error saying %q is outside the workspace", res, p)
				}
			})
		}
	}
	t.Cleanup(func() {
		if got := readFile(t, filepath.Join(outside, "secret.txt")); got != "secret\n" {
			t.Errorf("a file outside the workspace was changed: %q", got)
		}
		for _, name := range []string{"new.txt", "newdir", "x"} {
			if _, err := os.Lstat(filepath.Join(outside, name)); err == nil {
				t.Errorf("%s was created outside the workspace", name)
			}
		}
	})
}
