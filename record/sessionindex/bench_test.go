package sessionindex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/record/session"
)

// BenchmarkTotals lists the store in $MECHA_INDEX_BENCH_DIR from its
// index, as "sessions list" does (scripts/index-bench.sh times the
// command itself).
func BenchmarkTotals(b *testing.B) {
	dir := os.Getenv("MECHA_INDEX_BENCH_DIR")
	if dir == "" {
		b.Skip("MECHA_INDEX_BENCH_DIR names no store")
	}
	for b.Loop() {
		ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
		st := &session.Store{Dir: dir, Index: ix}
		if _, _, err := st.Totals(nil, 0); err != nil {
			b.Fatal(err)
		}
		ix.Close()
	}
}
