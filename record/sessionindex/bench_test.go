package sessionindex

import (
	"os"
	"path/filepath"
	"syscall"
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

// BenchmarkFreshness is the check every reader makes first, alone: each
// file of the store in $MECHA_INDEX_BENCH_DIR stat'd and compared with
// its entry in the snapshot (read once, before the loop).
func BenchmarkFreshness(b *testing.B) {
	dir := os.Getenv("MECHA_INDEX_BENCH_DIR")
	if dir == "" {
		b.Skip("MECHA_INDEX_BENCH_DIR names no store")
	}
	ix := &Index{dir: dir, path: filepath.Join(dir, Name)}
	snap := ix.readSnapshot(readEntries, 0)
	if snap == nil {
		b.Skip("the store has no snapshot: list it once first")
	}
	dfd, _, err := openDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer syscall.Close(dfd)
	for b.Loop() {
		if changed, _ := ix.unchanged(dfd, snap); len(changed) != 0 {
			b.Fatalf("%d sessions changed", len(changed))
		}
	}
}
