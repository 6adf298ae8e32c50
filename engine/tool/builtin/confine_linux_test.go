//go:build linux

package builtin

import (
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// raceResult is what one run of the race saw.
type raceResult struct {
	leaks   []string // results that showed the canary
	changed bool     // a file outside was written or changed
	ops     int      // operations run
	refused int      // of which refused as outside: they met the swap
	swaps   int      // exchanges made
}

// race runs the attacks from workers goroutines, rounds times each,
// while another goroutine exchanges d (the directory) and x (the link to
// outside) with renameat2(RENAME_EXCHANGE), so that d is always one or the
// other, never missing. The workers start after the first exchange and the
// exchanger stops, with d a directory again, when they are done: the run is
// bounded by the workers' iteration count, not by time.
func race(t *testing.T, fx swapFixture, ops fileOps, workers, rounds int) raceResult {
	t.Helper()
	before := snapshot(t, fx.outside)
	d, x := filepath.Join(fx.root, "d"), filepath.Join(fx.root, "x")
	exchange := func() error { return unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, x, unix.RENAME_EXCHANGE) }
	if err := exchange(); err != nil {
		t.Skipf("renameat2(RENAME_EXCHANGE): %v", err)
	}
	var (
		done    atomic.Bool
		swaps   = 1
		swapErr error
		wg      sync.WaitGroup
	)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for !done.Load() || swaps%2 == 1 {
			if swapErr = exchange(); swapErr != nil {
				return
			}
			swaps++
		}
	}()
	var mu sync.Mutex
	var res raceResult
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range rounds {
				a := attacks[(w+i)%len(attacks)]
				got := a.do(ops)
				mu.Lock()
				res.ops++
				if strings.Contains(got, "is outside the workspace") {
					res.refused++
				}
				if strings.Contains(got, canary) {
					res.leaks = append(res.leaks, a.name+": "+got)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	done.Store(true)
	<-stopped
	if swapErr != nil {
		t.Fatalf("exchange %d: %v", swaps, swapErr)
	}
	res.swaps = swaps
	res.changed = !sameFiles(before, snapshot(t, fx.outside))
	return res
}

// TestSwapRace: the naive check-then-open implementation, raced, escapes
// (the control: the race is real and the test can see an escape); the
// tools, raced the same way, never read the canary, never show it in a
// message, never write or change a file outside.
func TestSwapRace(t *testing.T) {
	t.Parallel()
	const workers, rounds = 4, 250

	t.Run("naive escapes", func(t *testing.T) {
		t.Parallel()
		// The window between check and use is short: run batches until
		// one escapes, a bounded number of times.
		const batches = 100
		for i := range batches {
			fx := newSwapFixture(t)
			r := race(t, fx, naiveFS{root: fx.root}, workers, rounds)
			if len(r.leaks) > 0 || r.changed {
				t.Logf("batch %d: %d of %d operations leaked the canary, outside changed: %v (%d swaps)", i, len(r.leaks), r.ops, r.changed, r.swaps)
				return
			}
		}
		t.Fatalf("the naive implementation never escaped in %d batches of %d operations: the race proves nothing", batches, workers*rounds)
	})

	t.Run("tools stay inside", func(t *testing.T) {
		t.Parallel()
		fx := newSwapFixture(t)
		ws, err := NewWorkspace(fx.root)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close()
		ops := newRealFS(ws)
		r := race(t, fx, ops, workers, rounds)
		for _, l := range r.leaks {
			t.Errorf("a result showed outside content: %q", l)
		}
		if r.changed {
			t.Error("a file outside the workspace was written or changed")
		}
		t.Logf("%d operations, %d refused as outside, %d swaps", r.ops, r.refused, r.swaps)
		if r.refused == 0 {
			t.Error("no operation met the swapped directory: the race tested nothing")
		}
		if got := ops.read("d/f.txt"); got != "inside\n" {
			t.Errorf("after the race fs_read d/f.txt = %q", got)
		}
	})
}
