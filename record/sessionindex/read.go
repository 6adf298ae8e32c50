package sessionindex

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

var _ session.Index = (*Index)(nil)

// current returns the sessions of the store as they are now, newest
// first, with the files a listing passes over; nil when the index cannot
// be used (the caller then reads the files). When every file matches the
// snapshot, that is all it reads; otherwise it brings the database in
// step for the files that changed and writes the snapshot again. what is
// readEntries, or readAll for the summaries too.
//
// When the store's directory is as the snapshot recorded it (no file
// created, removed or renamed since), the snapshot's entries are the files
// to check: each is stat'd and nothing else read. Otherwise the directory
// is read and every .jsonl file in it stat'd and matched with its entry.
func (ix *Index) current(what int) (*snapshot, []*session.FileError, error) {
	snap, skipped, _, err := ix.currentThen(what, nil, true)
	return snap, skipped, err
}

// currentThen is current that calls opened (when not nil) once the
// snapshot file is open, before it is read and checked (see
// readSnapshotThen), so that the caller may start on the database
// meanwhile; fresh says every file matched that snapshot, which is the
// one returned, and the database was not written. With handOff, a large
// indexing to do is handed to SetBackfill's start when there is one, and
// then nil is returned (the caller reads the files).
func (ix *Index) currentThen(what int, opened func(), handOff bool) (_ *snapshot, _ []*session.FileError, fresh bool, _ error) {
	dfd, dirBefore, err := openDir(ix.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, false, nil // no store: the scans say so
	}
	if err != nil {
		return nil, nil, false, err
	}
	defer syscall.Close(dfd)
	// When the store's directory is as the snapshot recorded it, its
	// files are stat'd block by block as the snapshot is decoded.
	var check *checker
	snap := ix.readSnapshotThen(what, 0, &readHooks{opened: opened, blocks: func(s *snapshot) func([]entry) {
		if s.dirMtime == 0 || s.dirMtime != dirBefore.mtime || s.dirIno != dirBefore.ino {
			return nil
		}
		check = newChecker(dfd)
		return check.add
	}})
	var changed []string
	var skipped []*session.FileError
	if check != nil {
		changed = check.wait()
	}
	if snap != nil && check != nil {
		changed, skipped = ix.passedOver(snap, changed)
		if len(changed) == 0 {
			return snap, skipped, true, nil
		}
	} else {
		var err error
		if changed, skipped, err = ix.compare(dfd, snap); err != nil {
			return nil, nil, false, err
		}
		if snap != nil && len(changed) == 0 {
			// Every file is as the snapshot has it: the directory as it
			// was read may be recorded for the readers after (see
			// unchanged).
			if d := dirBefore; (snap.dirMtime != d.mtime || snap.dirIno != d.ino) && time.Since(time.Unix(0, d.mtime)) > 2*time.Second {
				ix.recordDir(snap, d, skipped)
			}
			return snap, skipped, true, nil
		}
	}
	if snap != nil && len(changed) <= maxPatch && len(changed) <= len(snap.entries)/4+64 {
		if s, sk, ok, err := ix.patch(snap, changed, skipped, dirBefore); ok || err != nil {
			return s, sk, false, err
		}
	}
	if handOff && ix.handedOff(dfd, snap, changed) {
		return nil, nil, false, nil
	}
	s, sk, err := ix.rebuildSnapshot(ix.readSnapshot(readAll, 0))
	return s, sk, false, err
}

// handedOff hands the indexing of the sessions changed to SetBackfill's
// start, when there is one and the work is large enough to be announced;
// true when start took it. The bytes are those of each file past what the
// snapshot (when there is one) had indexed of it.
func (ix *Index) handedOff(dfd int, snap *snapshot, changed []string) bool {
	ix.optMu.Lock()
	start := ix.backfill
	ix.optMu.Unlock()
	if start == nil {
		return false
	}
	var bytes int64
	if snap != nil {
		snap.index()
	}
	for _, id := range changed {
		fs := statAt(dfd, id, session.Ext)
		if fs.err != nil {
			continue
		}
		bytes += fs.size
		if snap != nil {
			if j, ok := snap.byName[id]; ok && snap.entries[j].ino == fs.ino && snap.entries[j].size <= fs.size {
				bytes -= snap.entries[j].size
			}
		}
	}
	if !large(len(changed), bytes) {
		return false
	}
	return start(len(changed), bytes)
}

// maxPatch is the most changed sessions a reader brings in step one by one
// (patch); past it, or a quarter of the store, it rebuilds the snapshot.
const maxPatch = 2000

// unchanged checks the snapshot's every entry against its file, and the
// files it passed over, when the directory is as it was when the snapshot
// was made: the sessions that changed (or are sessions now), and the
// files it passes over. (currentThen does the same while it decodes the
// snapshot.)
func (ix *Index) unchanged(dfd int, snap *snapshot) (changed []string, skipped []*session.FileError) {
	c := newChecker(dfd)
	for i := 0; i < len(snap.entries); i += blockEntries {
		c.add(snap.entries[i:min(i+blockEntries, len(snap.entries))])
	}
	return ix.passedOver(snap, c.wait())
}

// checker stats the files of entries it is given, on one goroutine per
// processor, as they come (a block of the snapshot at a time): the
// sessions whose file is not as their entry says.
type checker struct {
	dfd     int
	blocks  chan []entry
	wg      sync.WaitGroup
	mu      sync.Mutex
	changed []string
}

func newChecker(dfd int) *checker {
	c := &checker{dfd: dfd, blocks: make(chan []entry, 64)}
	for range runtime.GOMAXPROCS(0) {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			for es := range c.blocks {
				for i := range es {
					x := &es[i]
					if fs := statAt(c.dfd, x.name, session.Ext); fs.err != nil || !fs.regular || fs.size != x.size || fs.mtime != x.mtime || fs.ino != x.ino {
						c.mu.Lock()
						c.changed = append(c.changed, x.name)
						c.mu.Unlock()
					}
				}
			}
		}()
	}
	return c
}

// add hands the checker entries to check; they must not change after.
func (c *checker) add(es []entry) { c.blocks <- es }

// wait waits for every entry handed to be checked, and returns the
// sessions that changed; the checker is done with.
func (c *checker) wait() []string {
	close(c.blocks)
	c.wg.Wait()
	return c.changed
}

// passedOver adds to changed the files snap passed over that are sessions
// now, and returns those that are still not.
func (ix *Index) passedOver(snap *snapshot, changed []string) ([]string, []*session.FileError) {
	var skipped []*session.FileError
	for _, name := range snap.passed {
		if _, fe := session.PeekFile(ix.dir, name); fe != nil {
			skipped = append(skipped, fe)
		} else {
			changed = append(changed, strings.TrimSuffix(name, session.Ext)) // a session now
		}
	}
	return changed, skipped
}

// compare reads the directory and stats every .jsonl file in it: the
// sessions that are not as the snapshot (nil: none) has them (new,
// changed or gone), and the files a listing passes over.
func (ix *Index) compare(dfd int, snap *snapshot) (changed []string, skipped []*session.FileError, err error) {
	names, err := dirNames(dfd)
	if err != nil {
		return nil, nil, err
	}
	stats := make([]fileStat, len(names))
	parallelChunks(len(names), func(i int) { stats[i] = statAt(dfd, names[i], "") })
	var seen []bool
	if snap != nil {
		snap.index()
		seen = make([]bool, len(snap.entries))
	}
	for i, name := range names {
		id := strings.TrimSuffix(name, session.Ext)
		fs := stats[i]
		if fs.dir {
			if lst, err := os.Lstat(filepath.Join(ix.dir, name)); err == nil && lst.IsDir() {
				continue // a directory: not listed, as the scans have it
			}
		}
		j, known := -1, false
		if snap != nil {
			j, known = snap.byName[id]
		}
		if known {
			seen[j] = true
			if x := &snap.entries[j]; fs.err == nil && fs.regular && x.size == fs.size && x.mtime == fs.mtime && x.ino == fs.ino {
				continue
			}
			changed = append(changed, id)
			continue
		}
		// Not in the snapshot: a file that is not a session, or a new one.
		if _, fe := session.PeekFile(ix.dir, name); fe != nil {
			skipped = append(skipped, fe)
			continue
		}
		changed = append(changed, id)
	}
	for j, ok := range seen {
		if !ok {
			changed = append(changed, snap.entries[j].name) // gone
		}
	}
	if snap == nil && changed == nil {
		changed = []string{} // no snapshot: everything is to be made
	}
	return changed, skipped, nil
}

// patch brings the sessions changed in step and writes the snapshot again
// with their entries replaced (a session gone or no longer one loses its
// entry); false when the snapshot must be made again whole instead (the
// database is not the one it was made from, or another process replaced
// it meanwhile).
func (ix *Index) patch(checked *snapshot, changed []string, skipped []*session.FileError, dir fileStat) (*snapshot, []*session.FileError, bool, error) {
	old := checked
	if !old.withSums {
		if old = ix.readSnapshot(readAll, 0); old == nil || !sameEntries(old, checked) {
			return nil, nil, false, nil
		}
	}
	st, db, err := ix.sync(changed)
	if err != nil || st == nil {
		return nil, nil, err == nil && st == nil, err
	}
	var id uint64
	if err := db.QueryRow("SELECT id FROM ident").Scan(&id); err != nil || id != old.db {
		return nil, nil, false, nil
	}
	drop := make(map[string]bool, len(changed))
	for _, name := range changed {
		drop[name] = true
	}
	snap := &snapshot{db: id, withSums: true}
	for i := range old.entries {
		if !drop[old.entries[i].name] {
			snap.entries = append(snap.entries, old.entries[i])
		}
	}
	sids, err := sidsOf(db, st.names)
	if err != nil {
		return nil, nil, false, err
	}
	if len(sids) > 0 {
		es, err := ix.entries(db, sids)
		if err != nil {
			return nil, nil, false, err
		}
		snap.entries = append(snap.entries, es...)
	}
	sortEntries(snap.entries)
	snap.total = len(snap.entries)
	skipped = append(skipped, st.skipped...)
	for _, fe := range skipped {
		snap.passed = append(snap.passed, filepath.Base(fe.Path))
	}
	if dir.err == nil && time.Since(time.Unix(0, dir.mtime)) > 2*time.Second {
		snap.dirMtime, snap.dirIno = dir.mtime, dir.ino
	}
	ix.writeSnapshot(snap.encode())
	return snap, skipped, true, nil
}

// sidsOf returns the row ids of the sessions names.
func sidsOf(db *sql.DB, names []string) ([]int64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	args := make([]any, len(names))
	for i, n := range names {
		args[i] = n
	}
	rs, err := db.Query("SELECT sid FROM sessions WHERE name IN ("+strings.Repeat(",?", len(names))[1:]+")", args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []int64
	for rs.Next() {
		var sid int64
		if err := rs.Scan(&sid); err != nil {
			return nil, err
		}
		out = append(out, sid)
	}
	return out, rs.Err()
}

// recordDir writes the snapshot again with the directory's stat, when
// the file still holds the snapshot that was checked.
func (ix *Index) recordDir(checked *snapshot, d fileStat, skipped []*session.FileError) {
	snap := checked
	if !snap.withSums {
		if snap = ix.readSnapshot(readAll, 0); snap == nil || !sameEntries(snap, checked) {
			return
		}
	}
	snap.dirMtime, snap.dirIno = d.mtime, d.ino
	snap.passed = snap.passed[:0:0]
	for _, fe := range skipped {
		snap.passed = append(snap.passed, filepath.Base(fe.Path))
	}
	ix.writeSnapshot(snap.encode())
	checked.dirMtime, checked.dirIno, checked.passed = snap.dirMtime, snap.dirIno, snap.passed
}

// sameEntries says a and b list the same files at the same stats.
func sameEntries(a, b *snapshot) bool {
	if a.db != b.db || len(a.entries) != len(b.entries) {
		return false
	}
	for i := range a.entries {
		x, y := &a.entries[i], &b.entries[i]
		if x.name != y.name || x.size != y.size || x.mtime != y.mtime || x.ino != y.ino {
			return false
		}
	}
	return true
}

// testHookRebuilding, when not nil, is called each time the snapshot is
// made again from the whole database (not patched).
var testHookRebuilding func()

// rebuildSnapshot brings the database in step and makes the snapshot
// again from it, reusing the old one's entries whose files are unchanged
// when old holds their summaries (one read without them, as a search
// reads it, is not reused; nil: none).
func (ix *Index) rebuildSnapshot(old *snapshot) (*snapshot, []*session.FileError, error) {
	if testHookRebuilding != nil {
		testHookRebuilding()
	}
	// The directory as it is before it is read: a session created after
	// this changes its mtime. One changed in the last two seconds is not
	// trusted: the kernel's clock for mtimes is coarse, and a file made
	// in the same tick would leave it as it is.
	var dirMtime, dirIno int64
	if st, err := os.Stat(ix.dir); err == nil && st.IsDir() {
		os.MkdirAll(filepath.Dir(ix.path), 0o700) // before: making it changes the mtime
	}
	if d := statFile(ix.dir); d.err == nil && time.Since(time.Unix(0, d.mtime)) > 2*time.Second {
		dirMtime, dirIno = d.mtime, d.ino
	}
	for attempt := 0; ; attempt++ {
		st, db, err := ix.sync(nil)
		if err != nil || st == nil {
			return nil, nil, err
		}
		snap, err := ix.snapshotFrom(db, st, old)
		if err == nil {
			snap.dirMtime, snap.dirIno = dirMtime, dirIno
			for _, fe := range st.skipped {
				snap.passed = append(snap.passed, filepath.Base(fe.Path))
			}
			ix.writeSnapshot(snap.encode())
			return snap, st.skipped, nil
		}
		if attempt > 0 || !isCorrupt(err) {
			return nil, nil, err
		}
		ix.mu.Lock()
		ok := ix.rebuild(err)
		ix.mu.Unlock()
		if !ok {
			return nil, nil, err
		}
		old = nil
	}
}

// snapshotFrom makes the snapshot of the sessions st found from the
// database (and old's entries for files that have not changed since).
func (ix *Index) snapshotFrom(db *sql.DB, st *state, old *snapshot) (*snapshot, error) {
	var id uint64
	if err := db.QueryRow("SELECT id FROM ident").Scan(&id); err != nil {
		return nil, err
	}
	// The database's rows are the truth here: old entries are reused only
	// when they say what the rows say of their files.
	rs, err := db.Query("SELECT sid, name, size, mtime, ino FROM sessions")
	if err != nil {
		return nil, err
	}
	type at struct {
		sid              int64
		size, mtime, ino int64
	}
	rowsOf := map[string]at{}
	for rs.Next() {
		var a at
		var name string
		if err := rs.Scan(&a.sid, &name, &a.size, &a.mtime, &a.ino); err != nil {
			rs.Close()
			return nil, err
		}
		rowsOf[name] = a
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return nil, err
	}
	snap := &snapshot{db: id, withSums: true}
	if old != nil && old.withSums {
		old.index()
	} else {
		old = nil
	}
	var need []int64
	for _, name := range st.names {
		a, ok := rowsOf[name]
		if !ok {
			continue
		}
		if old != nil {
			if j, ok := old.byName[name]; ok {
				var t session.Totals
				if x := old.entries[j]; x.size == a.size && x.mtime == a.mtime && x.ino == a.ino && x.totals(ix.dir, &t) == nil {
					if _, err := x.summaries(); err == nil {
						snap.entries = append(snap.entries, x)
						continue
					}
				}
			}
		}
		need = append(need, a.sid)
	}
	for len(need) > 0 {
		n := min(len(need), 500)
		es, err := ix.entries(db, need[:n])
		if err != nil {
			return nil, err
		}
		snap.entries = append(snap.entries, es...)
		need = need[n:]
	}
	sortEntries(snap.entries)
	snap.total = len(snap.entries)
	snap.index()
	return snap, nil
}

// entries reads the sessions sids from the database.
func (ix *Index) entries(db *sql.DB, sids []int64) ([]entry, error) {
	in := strings.Repeat(",?", len(sids))[1:]
	args := make([]any, len(sids))
	for i, s := range sids {
		args[i] = s
	}
	rs, err := db.Query(`SELECT sid, name, size, mtime, ino, created, format, provider, model, workspace, title, replay_of, rerun_of, reflects_on, distill,
		parent, parent_call, rich, header, header_id, coalesce(tail_turns, turns), stop, finished, tail_turns IS NOT NULL
		FROM sessions WHERE sid IN (`+in+`)`, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	at := map[int64]int{}
	var out []entry
	for rs.Next() {
		var x entry
		var l listed
		var sid int64
		var created string
		var parent, call sql.NullString
		var header []byte
		var rich bool
		m := &l.info.Meta
		if err := rs.Scan(&sid, &x.name, &x.size, &x.mtime, &x.ino, &created, &m.Format, &m.Provider, &m.Model, &m.Workspace, &m.Title, &m.ReplayOf, &m.RerunOf,
			&m.ReflectsOn, &m.Distill, &parent, &call, &rich, &header, &l.info.HeaderID, &l.turns, &l.stop, &l.finished, &l.tail); err != nil {
			return nil, err
		}
		if rich {
			dm, err := transcript.DecodeMeta(header)
			if err != nil {
				return nil, fmt.Errorf("a header it holds does not decode: %w", err)
			}
			*m = *dm
			l.header = string(header)
		} else {
			if m.CreatedAt, err = time.Parse(time.RFC3339Nano, created); err != nil {
				return nil, err
			}
			if parent.Valid {
				m.Parent = &transcript.ParentCall{Session: parent.String, CallID: call.String}
			}
		}
		x.raw = encodePayload(&l)
		at[sid] = len(out)
		out = append(out, x)
	}
	if err := rs.Err(); err != nil {
		return nil, err
	}
	sr, err := db.Query("SELECT sid, rec FROM sums WHERE sid IN ("+in+") ORDER BY sid, line", args...)
	if err != nil {
		return nil, err
	}
	defer sr.Close()
	recs := make([][]string, len(out))
	for sr.Next() {
		var sid int64
		var rec []byte
		if err := sr.Scan(&sid, &rec); err != nil {
			return nil, err
		}
		if i, ok := at[sid]; ok {
			recs[i] = append(recs[i], string(rec))
		}
	}
	if err := sr.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].sums = encodeSums(recs[i])
	}
	return out, nil
}

// parallelChunks calls fn(0..n-1) on one goroutine per processor, handing
// out the indices in chunks so that the goroutines seldom meet.
func parallelChunks(n int, fn func(i int)) {
	const chunk = 512
	workers := min(runtime.GOMAXPROCS(0), (n+chunk-1)/chunk)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				start := int(next.Add(chunk)) - chunk
				if start >= n {
					return
				}
				for i := start; i < min(start+chunk, n); i++ {
					fn(i)
				}
			}
		}()
	}
	wg.Wait()
}

// read answers from the current listing, or returns false when the index
// cannot be used.
func (ix *Index) read(what int, fn func(snap *snapshot, skipped []*session.FileError) error) (bool, error) {
	snap, skipped, err := ix.current(what)
	if err != nil {
		return ix.failed(err)
	}
	if snap == nil {
		return false, nil
	}
	return true, fn(snap, skipped)
}

// failed gives up on the index for this process: the files are read.
// An interrupted indexing is not a failure: its error is returned, for
// the command to stop.
func (ix *Index) failed(err error) (bool, error) {
	if errors.Is(err, ErrInterrupted) {
		return false, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.broken = true
	ix.say("the session index %s failed (%v); reading the transcripts instead", ix.path, short(err))
	return false, nil
}

// List is session.Store.List from the index.
func (ix *Index) List() (*session.Listing, error) {
	l := &session.Listing{}
	ok, err := ix.read(readEntries, func(snap *snapshot, skipped []*session.FileError) error {
		l.Sessions = make([]session.Info, len(snap.entries))
		var t session.Totals
		for i := range snap.entries {
			if err := snap.entries[i].totals(ix.dir, &t); err != nil {
				return err
			}
			l.Sessions[i] = t.Info
		}
		l.NotSessions = skipped
		return nil
	})
	if !ok && err == nil {
		return session.ScanList(ix.dir)
	}
	return l, err
}

// Totals is session.Store.Totals from the index. With a limit, when the
// store's directory is as it was when the snapshot was made (no session
// created, removed or renamed since: the files are append-only, so no
// header has changed and the newest sessions are the snapshot's), only
// the sessions shown are checked against their files.
func (ix *Index) Totals(keep func(transcript.Meta) bool, limit int) ([]session.Totals, []*session.FileError, error) {
	if limit > 0 {
		if out, skipped, ok := ix.quickTotals(keep, limit); ok {
			return out, skipped, nil
		}
	}
	var out []session.Totals
	var skippedFiles []*session.FileError
	ok, err := ix.read(readEntries, func(snap *snapshot, skipped []*session.FileError) error {
		var err error
		out, _, err = decodeTotals(ix.dir, snap.entries, keep, limit)
		skippedFiles = skipped
		return err
	})
	if !ok && err == nil {
		return session.ScanTotals(ix.dir, keep, limit)
	}
	return out, skippedFiles, err
}

// decodeTotals decodes the entries keep accepts (nil: all), at most limit
// of them when it is above zero, and says which entries they are.
func decodeTotals(dir string, entries []entry, keep func(transcript.Meta) bool, limit int) ([]session.Totals, []int, error) {
	if limit <= 0 && len(entries) >= 4096 {
		return decodeAll(dir, entries, keep)
	}
	n := len(entries)
	if limit > 0 && keep == nil {
		n = min(n, limit)
	}
	out := make([]session.Totals, n)
	var pos []int
	if limit > 0 {
		pos = make([]int, 0, n)
	}
	k := 0
	for i := range entries {
		if k == len(out) || limit > 0 && k == limit {
			break
		}
		t := &out[k]
		if err := entries[i].totals(dir, t); err != nil {
			return nil, nil, err
		}
		if keep != nil && !keep(t.Meta) {
			*t = session.Totals{}
			continue
		}
		if limit > 0 {
			pos = append(pos, i)
		}
		k++
	}
	return out[:k:k], pos, nil
}

// decodeAll is decodeTotals with no limit, for a large store: the
// entries decoded on every core, then kept (keep is called on one
// goroutine, in order).
func decodeAll(dir string, entries []entry, keep func(transcript.Meta) bool) ([]session.Totals, []int, error) {
	out := make([]session.Totals, len(entries))
	var failed atomic.Bool
	parallelChunks(len(entries), func(i int) {
		if entries[i].totals(dir, &out[i]) != nil {
			failed.Store(true)
		}
	})
	if failed.Load() {
		return nil, nil, errSnapshot
	}
	if keep == nil {
		return out, nil, nil
	}
	k := 0
	for i := range out {
		if keep(out[i].Meta) {
			if k != i {
				out[k] = out[i]
			}
			k++
		}
	}
	clear(out[k:])
	return out[:k:k], nil, nil
}

// Summaries is session.Store.Summaries from the index.
func (ix *Index) Summaries(keep func(transcript.Meta) bool) ([]session.Summarized, []*session.FileError, error) {
	var out []session.Summarized
	var skippedFiles []*session.FileError
	ok, err := ix.read(readAll, func(snap *snapshot, skipped []*session.FileError) error {
		if !snap.withSums {
			return errors.New("the listing snapshot was read without its summaries")
		}
		out = make([]session.Summarized, 0, len(snap.entries))
		var t session.Totals
		for i := range snap.entries {
			x := &snap.entries[i]
			if err := x.totals(ix.dir, &t); err != nil {
				return err
			}
			if keep != nil && !keep(t.Meta) {
				continue
			}
			sums, err := x.summaries()
			if err != nil {
				return err
			}
			out = append(out, session.Summarized{Info: t.Info, Summaries: sums})
		}
		skippedFiles = skipped
		return nil
	})
	if !ok && err == nil {
		return session.ScanSummaries(ix.dir, keep)
	}
	return out, skippedFiles, err
}

// Children is session.Store.Children from the index.
func (ix *Index) Children(parent string) ([]session.Info, error) {
	var out []session.Info
	ok, err := ix.read(readEntries, func(snap *snapshot, _ []*session.FileError) error {
		var t session.Totals
		for i := len(snap.entries) - 1; i >= 0; i-- {
			if err := snap.entries[i].totals(ix.dir, &t); err != nil {
				return err
			}
			if p := t.Meta.Parent; p != nil && p.Session == parent {
				out = append(out, t.Info)
			}
		}
		return nil
	})
	if !ok && err == nil {
		return session.ScanChildren(ix.dir, parent)
	}
	return out, err
}

// Closed brings the session id's rows in step after a writer closed it.
func (ix *Index) Closed(id string) {
	if _, _, err := ix.sync([]string{id}); err != nil {
		ix.mu.Lock()
		ix.say("the session index %s was not updated (%v); the next listing catches up", ix.path, short(err))
		ix.mu.Unlock()
	}
}

// Removed drops the rows of the session id, whose file is gone.
func (ix *Index) Removed(id string) { ix.Closed(id) }

// Reindex rebuilds the index from the files, and says how many sessions
// it holds.
func (ix *Index) Reindex() (int, error) {
	if st, err := os.Stat(ix.dir); err != nil || !st.IsDir() {
		return 0, nil // no store: nothing to index
	}
	ix.mu.Lock()
	if ix.db != nil {
		ix.db.Close()
		ix.db = nil
	}
	ix.broken = false
	db, err := ix.recreate()
	if err != nil {
		ix.mu.Unlock()
		return 0, fmt.Errorf("sessionindex: %w", err)
	}
	ix.db = db
	ix.mu.Unlock()
	snap, _, err := ix.rebuildSnapshot(nil)
	return ix.listed(snap, err)
}

// listed is what Reindex and CatchUp return: the sessions snap lists, or
// why there is none (ErrInterrupted as it is: it says what it is).
func (ix *Index) listed(snap *snapshot, err error) (int, error) {
	if errors.Is(err, ErrInterrupted) {
		return 0, err
	}
	if err != nil {
		return 0, fmt.Errorf("sessionindex: %w", err)
	}
	if snap == nil {
		return 0, fmt.Errorf("sessionindex: the index %s cannot be used", ix.path)
	}
	return len(snap.entries), nil
}

// quickTotals is Totals with a limit from the snapshot alone, when the
// store's directory has not changed since it was made and every session
// shown still matches its file; false otherwise. It reads the snapshot's
// first blocks, and the rest only when keep passes over too many.
func (ix *Index) quickTotals(keep func(transcript.Meta) bool, limit int) ([]session.Totals, []*session.FileError, bool) {
	dfd, d, err := openDir(ix.dir)
	if err != nil {
		return nil, nil, false
	}
	defer syscall.Close(dfd)
	snap := ix.readSnapshot(readHead, limit)
	if snap == nil || snap.dirMtime == 0 || snap.dirMtime != d.mtime || snap.dirIno != d.ino {
		return nil, nil, false
	}
	out, pos, err := decodeTotals(ix.dir, snap.entries, keep, limit)
	if err == nil && len(out) < limit && !snap.complete() {
		if snap = ix.readSnapshot(readEntries, 0); snap == nil || snap.dirMtime != d.mtime || snap.dirIno != d.ino {
			return nil, nil, false
		}
		out, pos, err = decodeTotals(ix.dir, snap.entries, keep, limit)
	}
	if err != nil {
		return nil, nil, false
	}
	for _, i := range pos {
		x := &snap.entries[i]
		if fs := statAt(dfd, x.name, session.Ext); fs.err != nil || !fs.regular || fs.size != x.size || fs.mtime != x.mtime || fs.ino != x.ino {
			return nil, nil, false
		}
	}
	var skipped []*session.FileError
	for _, name := range snap.passed {
		_, fe := session.PeekFile(ix.dir, name)
		if fe == nil {
			return nil, nil, false // a session now
		}
		skipped = append(skipped, fe)
	}
	return out, skipped, true
}
