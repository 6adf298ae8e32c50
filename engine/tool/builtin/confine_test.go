package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
)

// The attack these tests make: a directory of the workspace is swapped for
// a symbolic link to a directory outside it, between the moment a path is
// checked and the moment it is used. Outside holds a canary: content and a
// file name that must never reach a result, and files that must never be
// written or changed.

const canary = "CANARY"

// swapFixture is a workspace root and a directory outside it. The
// workspace holds d/ (f.txt, e.txt) and x, a relative symbolic link to
// outside; outside holds files of the same names with the canary in them,
// and a file named after it. swap exchanges what d and x are.
type swapFixture struct {
	root, outside string
}

func newSwapFixture(t *testing.T) swapFixture {
	t.Helper()
	var fx swapFixture
	for _, p := range []*string{&fx.root, &fx.outside} {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		*p = dir
	}
	writeFiles(t, fx.root, map[string]string{"d/f.txt": "inside\n", "d/e.txt": "alpha\n"})
	writeFiles(t, fx.outside, map[string]string{"f.txt": canary + " content\n", "e.txt": "alpha " + canary + "\n", canary + "-name": ""})
	rel, err := filepath.Rel(fx.root, fx.outside)
	if err != nil {
		t.Fatal(err)
	}
	symlink(t, rel, filepath.Join(fx.root, "x"))
	return fx
}

// swapOut makes d the link to outside (and keeps the real directory as
// d.real), with plain renames.
func (fx swapFixture) swapOut(t *testing.T) {
	t.Helper()
	d := filepath.Join(fx.root, "d")
	if err := os.Rename(d, d+".real"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(fx.root, "x"), d); err != nil {
		t.Fatal(err)
	}
}

// snapshot returns every file under dir with its mode and content, to
// compare before and after.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		s := fi.Mode().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			s += " " + string(b)
		}
		files[p] = s
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func sameFiles(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || v != w {
			return false
		}
	}
	return true
}

// naiveFS is the check-then-open implementation the tools must not be:
// resolve with filepath.EvalSymlinks, check the prefix, then use the path
// by name. between runs after the check and before the use.
type naiveFS struct {
	root    string
	between func()
}

func (n naiveFS) check(p string) (string, error) {
	full := filepath.Join(n.root, p)
	resolved, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", err
	}
	if resolved != n.root && !strings.HasPrefix(resolved, n.root+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is outside the workspace", p)
	}
	if n.between != nil {
		n.between()
	}
	return full, nil
}

func (n naiveFS) read(p string) string {
	full, err := n.check(p)
	if err != nil {
		return err.Error()
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// write checks the parent (the file is new) and writes p.
func (n naiveFS) write(p string) string {
	if _, err := n.check(filepath.Dir(p)); err != nil {
		return err.Error()
	}
	if err := os.WriteFile(filepath.Join(n.root, p), []byte("written\n"), 0o644); err != nil {
		return err.Error()
	}
	return "written"
}

func (n naiveFS) edit(p, old, new string) string {
	full, err := n.check(p)
	if err != nil {
		return err.Error()
	}
	b, err := os.ReadFile(full)
	if err != nil {
		return err.Error()
	}
	if !strings.Contains(string(b), old) {
		return "old_string was not found"
	}
	if err := os.WriteFile(full, []byte(strings.ReplaceAll(string(b), old, new)), 0o644); err != nil {
		return err.Error()
	}
	return "edited"
}

// glob lists p as list does: the names a glob matches among.
func (n naiveFS) glob(p string) string { return n.list(p) }

func (n naiveFS) list(p string) string {
	full, err := n.check(p)
	if err != nil {
		return err.Error()
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return err.Error()
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return strings.Join(names, "\n")
}

// grep checks p, then reads every file in it: the walk a search tool does.
func (n naiveFS) grep(p string) string {
	full, err := n.check(p)
	if err != nil {
		return err.Error()
	}
	entries, err := os.ReadDir(full)
	if err != nil {
		return err.Error()
	}
	var out strings.Builder
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(full, e.Name()))
		out.Write(b)
	}
	return out.String()
}

// realFS drives the built-in file tools.
type realFS struct{ tools map[string]tool.Tool }

func newRealFS(ws Workspace) realFS {
	r := realFS{tools: map[string]tool.Tool{}}
	for _, tl := range All(ws, Options{}) {
		r.tools[tl.Spec().Name] = tl
	}
	return r
}

// call returns what the model would read: the result, or a Go error.
func (r realFS) call(name string, in map[string]any) string {
	b, err := json.Marshal(in)
	if err != nil {
		return err.Error()
	}
	res, err := r.tools[name].Run(context.Background(), b)
	if err != nil {
		return err.Error()
	}
	return res.Content
}

func (r realFS) read(p string) string { return r.call(NameFSRead, map[string]any{"path": p}) }
func (r realFS) write(p string) string {
	return r.call(NameFSWrite, map[string]any{"path": p, "content": "written\n"})
}
func (r realFS) edit(p, old, new string) string {
	return r.call(NameFSEdit, map[string]any{"path": p, "old_string": old, "new_string": new, "replace_all": true})
}
func (r realFS) list(p string) string {
	return r.call(NameFSList, map[string]any{"path": p, "depth": 2})
}

func (r realFS) grep(p string) string {
	return r.call(NameFSGrep, map[string]any{"pattern": ".", "path": p})
}

func (r realFS) glob(p string) string {
	return r.call(NameFSGlob, map[string]any{"pattern": "**", "path": p})
}

// fileOps is what both implementations offer the attack.
type fileOps interface {
	read(p string) string
	write(p string) string
	edit(p, old, new string) string
	list(p string) string
	grep(p string) string
	glob(p string) string
}

// attacks are the six operations aimed at d, each with how to tell that
// it reached outside: by its result (it shows the canary) or by a change
// outside (the snapshot differs).
var attacks = []struct {
	name string
	do   func(fileOps) string
}{
	{"read", func(o fileOps) string { return o.read("d/f.txt") }},
	{"write", func(o fileOps) string { return o.write("d/new.txt") }},
	{"edit", func(o fileOps) string { return o.edit("d/e.txt", "alpha", "beta") }},
	{"list", func(o fileOps) string { return o.list("d") }},
	{"grep", func(o fileOps) string { return o.grep("d") }},
	{"glob", func(o fileOps) string { return o.glob("d") }},
}

// TestSwapBetweenCheckAndUse makes the swap deterministically. The naive
// implementation gets it between its check and its open, and escapes:
// that is the attack, and the proof that the fixture can catch an escape.
// The real tools have no check apart from the open: their root is opened
// (NewWorkspace), then d is swapped, then they act through the root, and
// they never reach outside.
func TestSwapBetweenCheckAndUse(t *testing.T) {
	t.Parallel()
	for _, a := range attacks {
		t.Run(a.name+"/naive escapes", func(t *testing.T) {
			t.Parallel()
			fx := newSwapFixture(t)
			before := snapshot(t, fx.outside)
			got := a.do(naiveFS{root: fx.root, between: func() { fx.swapOut(t) }})
			if !strings.Contains(got, canary) && sameFiles(before, snapshot(t, fx.outside)) {
				t.Fatalf("the naive implementation did not escape (result %q): the attack proves nothing", got)
			}
		})
		t.Run(a.name+"/tools stay inside", func(t *testing.T) {
			t.Parallel()
			fx := newSwapFixture(t)
			ws, err := NewWorkspace(fx.root)
			if err != nil {
				t.Fatal(err)
			}
			defer ws.Close()
			ops := newRealFS(ws)
			if got := a.do(ops); strings.Contains(got, "outside") {
				t.Fatalf("before the swap: %q", got) // the fixture works through the tools
			}
			before := snapshot(t, fx.outside)
			fx.swapOut(t)
			got := a.do(ops)
			if strings.Contains(got, canary) {
				t.Errorf("result shows the canary: %q", got)
			}
			if !strings.Contains(got, `path "d`) || !strings.Contains(got, "is outside the workspace") {
				t.Errorf("result = %q, want the refusal naming the path", got)
			}
			if !sameFiles(before, snapshot(t, fx.outside)) {
				t.Error("a file outside the workspace was written or changed")
			}
		})
	}
}

// TestSwappedWorkspaceRoot: the root is the directory NewWorkspace opened.
// Swapping the workspace path itself for a link to outside afterwards does
// not move the file tools (a tool that reopened the path would follow it).
func TestSwappedWorkspaceRoot(t *testing.T) {
	t.Parallel()
	fx := newSwapFixture(t)
	base := filepath.Join(filepath.Dir(fx.root), "ws")
	if err := os.Rename(fx.root, base); err != nil {
		t.Fatal(err)
	}
	ws, err := NewWorkspace(base)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := os.Rename(base, base+".real"); err != nil {
		t.Fatal(err)
	}
	symlink(t, fx.outside, base)
	// The guard off: the path now leads outside.
	if b, err := os.ReadFile(filepath.Join(base, "f.txt")); err != nil || !strings.Contains(string(b), canary) {
		t.Fatalf("the swapped path does not lead outside: %q, %v", b, err)
	}
	if got := newRealFS(ws).read("f.txt"); strings.Contains(got, canary) {
		t.Errorf("fs_read followed the swapped workspace path: %q", got)
	}
	if got := newRealFS(ws).read("d/f.txt"); got != "inside\n" {
		t.Errorf("fs_read d/f.txt = %q, want the workspace's own file", got)
	}
}
