package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFSList(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		input   string
		max     int
		links   map[string]string // more symbolic links: name -> target
		want    string
		wantErr bool
	}{
		{name: "default", input: `{}`, want: "B.txt\na.txt\nb/\nempty/\nlink -> a.txt\n"},
		{name: "empty input", input: ``, want: "B.txt\na.txt\nb/\nempty/\nlink -> a.txt\n"},
		{name: "dot", input: `{"path":"."}`, want: "B.txt\na.txt\nb/\nempty/\nlink -> a.txt\n"},
		{name: "depth 2", input: `{"depth":2}`, want: "B.txt\na.txt\nb/\nb/c.txt\nb/d/\nempty/\nlink -> a.txt\n"},
		{name: "depth 3", input: `{"depth":3}`, want: "B.txt\na.txt\nb/\nb/c.txt\nb/d/\nb/d/e.txt\nempty/\nlink -> a.txt\n"},
		{name: "subdirectory", input: `{"path":"b"}`, want: "b/c.txt\nb/d/\n"},
		{name: "subdirectory with slash", input: `{"path":"b/","depth":5}`, want: "b/c.txt\nb/d/\nb/d/e.txt\n"},
		{name: "empty directory", input: `{"path":"empty"}`, want: "[empty directory]"},
		{name: "through a link inside", input: `{"path":"blink"}`, links: map[string]string{"blink": "b"}, want: "blink/c.txt\nblink/d/\n"},
		{name: "absolute", input: `{"path":"ROOT/b/d"}`, want: "b/d/e.txt\n"},
		{
			name: "truncated", input: `{}`, max: 12,
			want: "B.txt\na.txt\n[... 3 more entries omitted (2 shown): the 12-byte output limit was reached; list a subdirectory or use a smaller depth]",
		},
		{
			name: "truncated counts deep entries", input: `{"depth":3}`, max: 12,
			want: "B.txt\na.txt\n[... 6 more entries omitted (2 shown): the 12-byte output limit was reached; list a subdirectory or use a smaller depth]",
		},
		{name: "depth too big", input: `{"depth":6}`, want: "invalid input: depth must be between 1 and 5, got 6", wantErr: true},
		{name: "depth zero", input: `{"depth":0}`, want: "invalid input: depth must be between 1 and 5, got 0", wantErr: true},
		{name: "a file", input: `{"path":"a.txt"}`, want: "a.txt is not a directory; use fs_read to read a file", wantErr: true},
		{name: "missing", input: `{"path":"nope"}`, want: "nope: no such file or directory", wantErr: true},
		{name: "outside", input: `{"path":".."}`, want: `path ".." is outside the workspace`, wantErr: true},
		{name: "unknown field", input: `{"recursive":true}`, want: `invalid input: unknown field "recursive" (accepted fields: path, depth)`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := testWorkspace(t)
			writeFiles(t, root, map[string]string{
				"a.txt": "a", "B.txt": "b", "b/c.txt": "c", "b/d/e.txt": "e", ".git/HEAD": "ref", "b/.git/config": "",
			})
			if err := os.Mkdir(filepath.Join(root, "empty"), 0o755); err != nil {
				t.Fatal(err)
			}
			symlink(t, "a.txt", filepath.Join(root, "link"))
			for name, target := range tt.links {
				symlink(t, target, filepath.Join(root, name))
			}
			res := run(t, NewFSList(ws, Options{MaxResultBytes: tt.max}), strings.ReplaceAll(tt.input, "ROOT", root))
			if res.IsError != tt.wantErr || res.Content != tt.want {
				t.Errorf("result = %+v\nwant IsError=%v %q", res, tt.wantErr, tt.want)
			}
		})
	}
}

func TestFSListUnreadableSubdirectory(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	ws, root := testWorkspace(t)
	writeFiles(t, root, map[string]string{"locked/x": "", "z": ""})
	if err := os.Chmod(filepath.Join(root, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, "locked"), 0o755) })
	res := run(t, NewFSList(ws, Options{}), `{"depth":2}`)
	if want := "locked/\n[cannot list locked/: permission denied]\nz\n"; res.IsError || res.Content != want {
		t.Errorf("result = %+v, want %q", res, want)
	}
}
