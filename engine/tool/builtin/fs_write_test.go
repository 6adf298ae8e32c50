package builtin

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testUmask is the process's umask (set by an init where there is one).
var testUmask fs.FileMode

func TestFSWrite(t *testing.T) {
	t.Parallel()
	newMode := 0o666 &^ testUmask // of a file fs_write creates
	tests := []struct {
		name     string
		input    string
		want     string
		wantErr  bool
		file     string // checked when set
		content  string
		wantMode fs.FileMode
	}{
		{name: "create", input: `{"path":"new.txt","content":"hello"}`, want: "created new.txt (5 bytes written)", file: "new.txt", content: "hello", wantMode: newMode},
		{name: "create with parents", input: `{"path":"x/y/z.txt","content":"é"}`, want: "created x/y/z.txt (2 bytes written)", file: "x/y/z.txt", content: "é", wantMode: newMode},
		{name: "overwrite keeps mode", input: `{"path":"run.sh","content":"echo new\n"}`, want: "overwrote run.sh (9 bytes written)", file: "run.sh", content: "echo new\n", wantMode: 0o750},
		{name: "empty content", input: `{"path":"old.txt","content":""}`, want: "overwrote old.txt (0 bytes written)", file: "old.txt", content: "", wantMode: 0o600},
		{name: "absolute inside", input: `{"path":"ROOT/abs.txt","content":"a"}`, want: "created abs.txt (1 bytes written)", file: "abs.txt", content: "a", wantMode: newMode},
		{name: "through a link inside", input: `{"path":"link","content":"via link"}`, want: "overwrote old.txt (8 bytes written)", file: "old.txt", content: "via link", wantMode: 0o600},
		{name: "through a dangling link inside", input: `{"path":"dangling","content":"new"}`, want: "created fresh.txt (3 bytes written)", file: "fresh.txt", content: "new", wantMode: newMode},
		{name: "through a link climbing out of its directory", input: `{"path":"dir/up","content":"up"}`, want: "overwrote old.txt (2 bytes written)", file: "old.txt", content: "up", wantMode: 0o600},
		{name: "trailing slash", input: `{"path":"x/","content":"a"}`, want: "created x (1 bytes written)", file: "x", content: "a", wantMode: newMode},
		{name: "absolute link inside", input: `{"path":"abslink","content":"x"}`, want: `path "abslink" ` + reasonLink, wantErr: true},
		{name: "dot dot", input: `{"path":"dir/..","content":"x"}`, want: "cannot write dir/..: is a directory", wantErr: true},
		{name: "directory", input: `{"path":"dir","content":"x"}`, want: "cannot write dir: is a directory", wantErr: true},
		{name: "parent is a file", input: `{"path":"old.txt/x","content":"x"}`, want: "cannot write old.txt/x: not a directory", wantErr: true},
		{name: "missing content", input: `{"path":"a.txt"}`, want: `invalid input: missing required field "content"`, wantErr: true},
		{name: "missing path", input: `{"content":"a"}`, want: `invalid input: missing required field "path"`, wantErr: true},
		{name: "outside", input: `{"path":"../a.txt","content":"a"}`, want: `path "../a.txt" is outside the workspace`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := testWorkspace(t)
			writeFiles(t, root, map[string]string{"run.sh": "echo old\n", "old.txt": "old", "dir/x": ""})
			if err := os.Chmod(filepath.Join(root, "run.sh"), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(filepath.Join(root, "old.txt"), 0o600); err != nil {
				t.Fatal(err)
			}
			symlink(t, "old.txt", filepath.Join(root, "link"))
			symlink(t, "fresh.txt", filepath.Join(root, "dangling"))
			symlink(t, "../old.txt", filepath.Join(root, "dir", "up"))
			symlink(t, filepath.Join(root, "old.txt"), filepath.Join(root, "abslink"))
			input := strings.ReplaceAll(tt.input, "ROOT", root)
			res := run(t, NewFSWrite(ws, Options{}), input)
			if res.IsError != tt.wantErr || res.Content != tt.want {
				t.Fatalf("result = %+v, want IsError=%v %q", res, tt.wantErr, tt.want)
			}
			if tt.file != "" {
				p := filepath.Join(root, tt.file)
				if got := readFile(t, p); got != tt.content {
					t.Errorf("%s holds %q, want %q", tt.file, got, tt.content)
				}
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				if fi.Mode().Perm() != tt.wantMode {
					t.Errorf("%s has mode %v, want %v", tt.file, fi.Mode().Perm(), tt.wantMode)
				}
			}
			if fi, err := os.Lstat(filepath.Join(root, "link")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link was replaced: %v %v", fi, err)
			}
			assertNoTempFiles(t, root)
		})
	}
}

// assertNoTempFiles fails when an atomic write left a temporary file.
func assertNoTempFiles(t *testing.T, root string) {
	t.Helper()
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if m, _ := filepath.Match(".*.tmp-*", d.Name()); m {
			t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}
