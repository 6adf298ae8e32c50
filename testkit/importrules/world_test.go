package importrules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommandsTakeTheWorldFromTheEnv holds every command to the rule.
func TestCommandsTakeTheWorldFromTheEnv(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("..", "..", "cli")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) < 10 {
		t.Fatalf("no commands under %s: %v", dir, err)
	}
	for _, e := range entries {
		// cmdkit makes the real Env: the one place that reads the world.
		if !e.IsDir() || e.Name() == "cmdkit" {
			continue
		}
		found, err := CheckWorldReads(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			t.Error(f)
		}
	}
}

// TestWorldReadsFires shows the check catching each kind of read, under
// another import name too, and leaving look-alikes alone.
func TestWorldReadsFires(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package bad

import (
	"net/http"
	"os"
	dbg "runtime/debug"
	"time"
)

type fake struct{ Now func() time.Time }

func f() {
	_ = os.Getenv("HOME")
	_ = time.Now()
	_ = time.Local
	_ = http.DefaultClient
	dbg.SetGCPercent(800)
	var x fake
	_ = x.Now // a field, not time.Now
	_ = time.Duration(1)
}
`
	if err := os.WriteFile(filepath.Join(dir, "bad.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Test files may read the world.
	if err := os.WriteFile(filepath.Join(dir, "bad_test.go"), []byte("package bad\nimport \"os\"\nvar _ = os.Getenv(\"X\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	found, err := CheckWorldReads(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"os.Getenv", "time.Now", "time.Local", "net/http.DefaultClient", "runtime/debug.SetGCPercent"}
	if len(found) != len(want) {
		t.Fatalf("found %d, want %d:\n%s", len(found), len(want), strings.Join(found, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(found[i], " "+w+":") {
			t.Errorf("finding %d = %q, want %s", i, found[i], w)
		}
	}
}
