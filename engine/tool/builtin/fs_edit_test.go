package builtin

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFSEdit(t *testing.T) {
	t.Parallel()
	const orig = "alpha\nbeta\nalpha\ngamma\nalpha\n"
	tests := []struct {
		name    string
		input   string
		want    string
		wantErr bool
		content string // of f.txt afterwards
	}{
		{name: "unique", input: `{"path":"f.txt","old_string":"beta","new_string":"BETA"}`, want: "replaced 1 occurrence in f.txt", content: "alpha\nBETA\nalpha\ngamma\nalpha\n"},
		{name: "multi-line", input: `{"path":"f.txt","old_string":"beta\nalpha\n","new_string":""}`, want: "replaced 1 occurrence in f.txt", content: "alpha\ngamma\nalpha\n"},
		{name: "unique with context", input: `{"path":"f.txt","old_string":"gamma\nalpha","new_string":"gamma\nomega"}`, want: "replaced 1 occurrence in f.txt", content: "alpha\nbeta\nalpha\ngamma\nomega\n"},
		{name: "ambiguous", input: `{"path":"f.txt","old_string":"alpha","new_string":"x"}`,
			want: "old_string occurs 3 times in f.txt; include more surrounding text to make it unique, or set replace_all to replace every occurrence", wantErr: true, content: orig},
		{name: "replace all", input: `{"path":"f.txt","old_string":"alpha","new_string":"x","replace_all":true}`, want: "replaced 3 occurrences in f.txt", content: "x\nbeta\nx\ngamma\nx\n"},
		{name: "replace all of one", input: `{"path":"f.txt","old_string":"beta","new_string":"b","replace_all":true}`, want: "replaced 1 occurrence in f.txt", content: "alpha\nb\nalpha\ngamma\nalpha\n"},
		{name: "not found", input: `{"path":"f.txt","old_string":"delta","new_string":"x"}`,
			want: "old_string was not found in f.txt; it must match the file exactly, including whitespace and indentation (read the file with fs_read to check)", wantErr: true, content: orig},
		{name: "same strings", input: `{"path":"f.txt","old_string":"beta","new_string":"beta"}`,
			want: "invalid input: old_string and new_string are the same; there is nothing to change", wantErr: true, content: orig},
		{name: "empty old_string", input: `{"path":"f.txt","old_string":"","new_string":"x"}`,
			want: "invalid input: old_string is empty; to create or overwrite a whole file, use fs_write", wantErr: true, content: orig},
		{name: "missing new_string", input: `{"path":"f.txt","old_string":"beta"}`, want: `invalid input: missing required field "new_string"`, wantErr: true, content: orig},
		{name: "missing old_string", input: `{"path":"f.txt","new_string":"beta"}`, want: `invalid input: missing required field "old_string"`, wantErr: true, content: orig},
		{name: "wrong type", input: `{"path":"f.txt","old_string":"beta","new_string":"b","replace_all":"yes"}`, want: `invalid input: field "replace_all" must be a boolean, got string`, wantErr: true, content: orig},
		{name: "missing file", input: `{"path":"nope.txt","old_string":"a","new_string":"b"}`, want: "nope.txt: no such file or directory", wantErr: true, content: orig},
		{name: "directory", input: `{"path":"dir","old_string":"a","new_string":"b"}`, want: "dir is a directory, not a file", wantErr: true, content: orig},
		{name: "binary", input: `{"path":"bin","old_string":"a","new_string":"b"}`, want: "bin is a binary file (it contains NUL bytes); fs_edit edits text files only", wantErr: true, content: orig},
		{name: "outside", input: `{"path":"/etc/hostname","old_string":"a","new_string":"b"}`, want: `path "/etc/hostname" is outside the workspace`, wantErr: true, content: orig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, root := testWorkspace(t)
			writeFiles(t, root, map[string]string{"f.txt": orig, "dir/x": "", "bin": "a\x00b"})
			if err := os.Chmod(filepath.Join(root, "f.txt"), 0o754); err != nil {
				t.Fatal(err)
			}
			res := run(t, NewFSEdit(ws, Options{}), tt.input)
			if res.IsError != tt.wantErr || res.Content != tt.want {
				t.Fatalf("result = %+v, want IsError=%v %q", res, tt.wantErr, tt.want)
			}
			if got := readFile(t, filepath.Join(root, "f.txt")); got != tt.content {
				t.Errorf("f.txt holds %q, want %q", got, tt.content)
			}
			fi, err := os.Stat(filepath.Join(root, "f.txt"))
			if err != nil || fi.Mode().Perm() != 0o754 {
				t.Errorf("f.txt mode = %v, %v; want 0754", fi.Mode().Perm(), err)
			}
			assertNoTempFiles(t, root)
		})
	}
}
