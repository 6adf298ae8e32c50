//go:build unix

package builtin

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestFIFORefusedWithoutBlocking: the file tools open with O_NONBLOCK and
// check the open descriptor, so a FIFO is refused at once; opened the
// ordinary way it would wait for a writer forever.
func TestFIFORefusedWithoutBlocking(t *testing.T) {
	t.Parallel()
	ws, root := testWorkspace(t)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	for _, tc := range []struct{ tl, in string }{
		{NameFSRead, `{"path":"fifo"}`},
		{NameFSEdit, `{"path":"fifo","old_string":"a","new_string":"b"}`},
		{NameFSWrite, `{"path":"fifo","content":"x"}`},
	} {
		res := run(t, toolNamed(t, ws, tc.tl), tc.in)
		want := "fifo is not a regular file"
		if tc.tl == NameFSWrite {
			want = "cannot write fifo: is not a regular file"
		}
		if !res.IsError || res.Content != want {
			t.Errorf("%s: result = %+v, want %q", tc.tl, res, want)
		}
	}
}
