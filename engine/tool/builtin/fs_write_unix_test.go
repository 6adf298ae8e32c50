//go:build unix

package builtin

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// The process's umask as the tests start, read before any test runs.
func init() {
	m := syscall.Umask(0)
	syscall.Umask(m)
	testUmask = fs.FileMode(m)
}

// TestFSWriteHonoursTheUmask: a file fs_write creates gets 0666 less the
// umask, as any program's new file does, and one it replaces keeps its
// mode whatever the umask. Not parallel: it sets the process's umask.
func TestFSWriteHonoursTheUmask(t *testing.T) {
	ws, root := testWorkspace(t)
	writeFiles(t, root, map[string]string{"shared.txt": "old"})
	if err := os.Chmod(filepath.Join(root, "shared.txt"), 0o664); err != nil {
		t.Fatal(err)
	}
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	for _, tc := range []struct {
		input, file string
		want        fs.FileMode
	}{
		{`{"path":"secret.txt","content":"s"}`, "secret.txt", 0o600},
		{`{"path":"shared.txt","content":"new"}`, "shared.txt", 0o664},
	} {
		if res := run(t, NewFSWrite(ws, Options{}), tc.input); res.IsError {
			t.Fatalf("%s: %s", tc.input, res.Content)
		}
		fi, err := os.Stat(filepath.Join(root, tc.file))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != tc.want {
			t.Errorf("%s has mode %v under umask 077, want %v", tc.file, fi.Mode().Perm(), tc.want)
		}
	}
	syscall.Umask(0o002)
	if res := run(t, NewFSWrite(ws, Options{}), `{"path":"group.txt","content":"g"}`); res.IsError {
		t.Fatal(res.Content)
	}
	fi, err := os.Stat(filepath.Join(root, "group.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o664 {
		t.Errorf("group.txt has mode %v under umask 002, want -rw-rw-r--", fi.Mode().Perm())
	}
	assertNoTempFiles(t, root)
}
