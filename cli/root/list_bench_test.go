package root

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
)

// BenchmarkSessionsList runs "mecha sessions list" in-process (parsing,
// listing, formatting) over the stores the session package's benchmarks
// build under $MECHA_BENCH_DIR (default $TMPDIR/mecha-bench): BenchmarkList's
// 10,000-session stores and BenchmarkListTotals' stores, with session_turns
// in their summaries ("-total") and without; run those first. It skips
// stores not built yet.
func BenchmarkSessionsList(b *testing.B) {
	root := os.Getenv("MECHA_BENCH_DIR")
	if root == "" {
		root = filepath.Join(os.TempDir(), "mecha-bench")
	}
	for _, name := range []string{"store-10000-1024", "store-10000-1048576",
		"store-1000-1024-total", "store-1000-1024", "store-1000-1048576-total", "store-1000-1048576",
		"store-10000-8192-total", "store-10000-8192"} {
		dir := filepath.Join(root, name)
		b.Run(name, func(b *testing.B) {
			if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
				b.Skipf("no store at %s: run go test -bench=List ./session first", dir)
			}
			env := &cmdkit.Env{Out: io.Discard, Err: io.Discard, Vars: func(k string) string {
				if k == "MECHA_SESSION_DIR" {
					return dir
				}
				return ""
			}}
			for b.Loop() {
				if code := Run(context.Background(), env, []string{"sessions", "list"}); code != 0 {
					b.Fatalf("exit %d", code)
				}
			}
		})
	}
}
