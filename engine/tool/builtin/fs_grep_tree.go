package builtin

import (
	"context"
	"os"
	"runtime"
	"sync/atomic"
)

// grepInFlight bounds the files opened and not yet added to the output.
const grepInFlight = 32

// grepTree searches a directory of the workspace: the walk opens each
// file in order, a searcher per processor reads and searches the files,
// and the results are added to the output in the walk's order, so the
// result is the same however the work was shared. Once the output is
// full the walk stops; the files already opened are closed unsearched.
type grepTree struct {
	ws          Workspace
	name        string // of the directory, from Workspace.name
	glob        string
	out         *grepOutput
	newSearcher func() *searcher
	unreadable  string // the walk's note of what it could not read
}

// grepJob is one file: opened by the walk, searched by a worker.
type grepJob struct {
	f    *os.File
	path string
	need int
	done chan grepDone
}

type grepDone struct {
	lines  []grepLine
	binary bool
	err    error
}

// search walks dir, the open directory t.name; its error is the
// context's when the call was cancelled.
func (t *grepTree) search(ctx context.Context, dir *os.Root) error {
	walkCtx, stop := context.WithCancel(ctx)
	defer stop()
	jobs := make(chan *grepJob, grepInFlight)
	order := make(chan *grepJob, grepInFlight)
	for range runtime.GOMAXPROCS(0) {
		go t.work(walkCtx, jobs)
	}
	// need is read by the walk while the output grows: it only shrinks,
	// so a file searched for more lines than it may add is cut by add.
	var need atomic.Int64
	need.Store(int64(t.out.need()))
	w := &walker{ctx: walkCtx, skip: t.ws.protected}
	w.visit = func(e walkEntry) error {
		if !e.typ.IsRegular() || t.glob != "" && !globMatches(t.glob, e.rel) {
			return nil
		}
		f, err := e.dir.OpenFile(e.name, readFlags, 0)
		if err != nil {
			w.cannot(e.path, err)
			return nil
		}
		if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
			f.Close() // swapped for something else since it was listed
			return nil
		}
		j := &grepJob{f: f, path: e.path, need: int(need.Load()), done: make(chan grepDone, 1)}
		order <- j
		jobs <- j
		return nil
	}
	w.start(t.ws, t.name)
	walked := make(chan error, 1)
	go func() {
		err := w.walk(dir, shownDir(t.name), splitName(t.name))
		close(jobs)
		close(order)
		walked <- err
	}()
	var unreadable []string
	for j := range order {
		d := <-j.done
		if walkCtx.Err() != nil {
			continue // full or cancelled: drained
		}
		if d.err != nil {
			unreadable = append(unreadable, unreadableEntry(j.path, d.err))
			continue
		}
		if !t.out.add(j.path, d.lines, d.binary) {
			stop()
		}
		need.Store(int64(t.out.need()))
	}
	<-walked
	if err := ctx.Err(); err != nil {
		return err
	}
	w.unreadable = append(w.unreadable, unreadable...)
	t.unreadable = w.unreadableNote()
	return nil
}

// work searches the files of jobs until it is closed; once ctx is done it
// only closes them.
func (t *grepTree) work(ctx context.Context, jobs <-chan *grepJob) {
	s := t.newSearcher()
	for j := range jobs {
		var d grepDone
		if ctx.Err() == nil {
			d.lines, d.binary, d.err = s.search(j.f, j.need)
		}
		j.f.Close()
		j.done <- d
	}
}
