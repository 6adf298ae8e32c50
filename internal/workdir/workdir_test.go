package workdir

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSame(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	real := filepath.Join(root, "real")
	other := filepath.Join(root, "other")
	for _, d := range []string{real, other} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{real, link, real + "/", filepath.Join(other, "..", "real")} {
		same, err := Same(arg)
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range []string{real, link, real + "/.", filepath.Join(root, "real/../link")} {
			if !same(rec) {
				t.Errorf("Same(%s)(%s) = false", arg, rec)
			}
		}
		for _, rec := range []string{other, root, "", "real", filepath.Join(root, "gone")} {
			if same(rec) {
				t.Errorf("Same(%s)(%s) = true", arg, rec)
			}
		}
	}
	// A workspace that is gone still matches as it was written.
	same, _ := Same(filepath.Join(root, "gone"))
	if !same(filepath.Join(root, "gone")) || !same(filepath.Join(root, "gone")+"/") || same(real) {
		t.Error("a removed workspace does not match as written")
	}
}
