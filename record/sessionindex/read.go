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
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

var _ session.Index = (*Index)(nil)

// current returns the sessions of the store as they are now, newest
// first, with the files a listing passes over; nil when the index cannot
// be used (the caller then reads the files). When every file matches the
// snapshot, that is all it reads; otherwise it brings the database in
// step and writes the snapshot again.
func (ix *Index) current() (*snapshot, []*session.FileError, error) {
	snap, skipped, err := ix.check()
	if err == nil && snap != nil {
		ix.mu.Lock()
		ix.last, ix.lastAt = snap, time.Now()
		ix.mu.Unlock()
	}
	return snap, skipped, err
}

// recent is the snapshot this process checked in the last second, or
// the current one.
func (ix *Index) recent() (*snapshot, error) {
	ix.mu.Lock()
	snap, at := ix.last, ix.lastAt
	ix.mu.Unlock()
	if snap != nil && time.Since(at) < time.Second {
		return snap, nil
	}
	snap, _, err := ix.current()
	return snap, err
}

func (ix *Index) check() (*snapshot, []*session.FileError, error) {
	dirBefore := statFile(ix.dir)
	names, err := readNames(ix.dir)
	if err != nil {
		return nil, nil, err
	}
	stats := make([]fileStat, len(names))
	parallelChunks(len(names), func(i int) { stats[i] = statFile(filepath.Join(ix.dir, names[i])) })
	snap := ix.readSnapshot()
	if snap != nil {
		snap.index()
	}
	var skipped []*session.FileError
	valid := snap != nil
	listed := 0
	for i, name := range names {
		id := strings.TrimSuffix(name, session.Ext)
		fs := stats[i]
		if fs.dir {
			if lst, err := os.Lstat(filepath.Join(ix.dir, name)); err == nil && lst.IsDir() {
				continue // a directory: not listed, as the scans have it
			}
		}
		if valid && fs.err == nil && fs.regular {
			if j, ok := snap.byName[id]; ok {
				if x := &snap.entries[j]; x.size == fs.size && x.mtime == fs.mtime && x.ino == fs.ino {
					listed++
					continue
				}
			}
		}
		if !valid {
			continue
		}
		// Not in the snapshot: a file that is not a session, or a change.
		if _, fe := session.PeekFile(ix.dir, name); fe != nil {
			skipped = append(skipped, fe)
			continue
		}
		valid = false
	}
	if valid && listed == len(snap.entries) {
		// Every file is as the snapshot has it: the directory as it was
		// read may be recorded for limited listings (see Totals).
		if d := dirBefore; d.err == nil && (snap.dirMtime != d.mtime || snap.dirIno != d.ino) && time.Since(time.Unix(0, d.mtime)) > 2*time.Second {
			snap.dirMtime, snap.dirIno = d.mtime, d.ino
			snap.passed = snap.passed[:0]
			for _, fe := range skipped {
				snap.passed = append(snap.passed, filepath.Base(fe.Path))
			}
			ix.writeSnapshot(snap.encode())
		}
		return snap, skipped, nil
	}
	return ix.rebuildSnapshot(snap)
}

// rebuildSnapshot brings the database in step and makes the snapshot
// again from it, reusing the old one's entries whose files are unchanged.
func (ix *Index) rebuildSnapshot(old *snapshot) (*snapshot, []*session.FileError, error) {
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
		st, db, err := ix.sync("")
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
	snap := &snapshot{db: id}
	if old != nil {
		old.index()
	}
	var need []int64
	for _, name := range st.names {
		a, ok := rowsOf[name]
		if !ok {
			continue
		}
		if old != nil {
			if j, ok := old.byName[name]; ok {
				if x := old.entries[j]; x.size == a.size && x.mtime == a.mtime && x.ino == a.ino && x.decode() == nil {
					snap.entries = append(snap.entries, x)
					continue
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
		var sid int64
		var created string
		var parent, call sql.NullString
		var header []byte
		var rich bool
		m := &x.info.Meta
		if err := rs.Scan(&sid, &x.name, &x.size, &x.mtime, &x.ino, &created, &m.Format, &m.Provider, &m.Model, &m.Workspace, &m.Title, &m.ReplayOf, &m.RerunOf,
			&m.ReflectsOn, &m.Distill, &parent, &call, &rich, &header, &x.info.HeaderID, &x.turns, &x.stop, &x.finished, &x.tail); err != nil {
			return nil, err
		}
		x.info.Ref = session.Ref{Dir: ix.dir, ID: x.name}
		if rich {
			dm, err := transcript.DecodeMeta(header)
			if err != nil {
				return nil, fmt.Errorf("a header it holds does not decode: %w", err)
			}
			*m = *dm
			x.header = string(header)
		} else {
			if m.CreatedAt, err = time.Parse(time.RFC3339Nano, created); err != nil {
				return nil, err
			}
			if parent.Valid {
				m.Parent = &transcript.ParentCall{Session: parent.String, CallID: call.String}
			}
		}
		m.ID = x.name
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
	for sr.Next() {
		var sid int64
		var rec []byte
		if err := sr.Scan(&sid, &rec); err != nil {
			return nil, err
		}
		if i, ok := at[sid]; ok {
			out[i].sums = append(out[i].sums, string(rec))
		}
	}
	return out, sr.Err()
}

// readNames returns the names of the .jsonl entries of dir; none when it
// does not exist.
func readNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	all, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	names := all[:0]
	for _, n := range all {
		if strings.HasSuffix(n, session.Ext) {
			names = append(names, n)
		}
	}
	return names, nil
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
func (ix *Index) read(fn func(snap *snapshot, skipped []*session.FileError) error) (bool, error) {
	snap, skipped, err := ix.current()
	if err != nil {
		return ix.failed(err)
	}
	if snap == nil {
		return false, nil
	}
	return true, fn(snap, skipped)
}

// failed gives up on the index for this process: the files are read.
func (ix *Index) failed(err error) (bool, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.broken = true
	ix.say("the session index %s failed (%v); reading the transcripts instead", ix.path, short(err))
	return false, nil
}

// List is session.Store.List from the index.
func (ix *Index) List() (*session.Listing, error) {
	l := &session.Listing{}
	ok, err := ix.read(func(snap *snapshot, skipped []*session.FileError) error {
		l.Sessions = make([]session.Info, len(snap.entries))
		for i := range snap.entries {
			if err := snap.entries[i].decode(); err != nil {
				return err
			}
			l.Sessions[i] = snap.entries[i].info
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
	ok, err := ix.read(func(snap *snapshot, skipped []*session.FileError) error {
		n := len(snap.entries)
		if limit > 0 && keep == nil {
			n = min(n, limit)
		}
		out = make([]session.Totals, 0, n)
		for i := range snap.entries {
			x := &snap.entries[i]
			if err := x.decode(); err != nil {
				return err
			}
			if keep != nil && !keep(x.info.Meta) {
				continue
			}
			out = append(out, session.Totals{Info: x.info, Turns: x.turns, Stop: x.stop, Finished: x.finished, Tail: x.tail})
			if limit > 0 && len(out) == limit {
				break
			}
		}
		skippedFiles = skipped
		return nil
	})
	if !ok && err == nil {
		return session.ScanTotals(ix.dir, keep, limit)
	}
	return out, skippedFiles, err
}

// Summaries is session.Store.Summaries from the index.
func (ix *Index) Summaries(keep func(transcript.Meta) bool) ([]session.Summarized, []*session.FileError, error) {
	var out []session.Summarized
	var skippedFiles []*session.FileError
	ok, err := ix.read(func(snap *snapshot, skipped []*session.FileError) error {
		for i := range snap.entries {
			x := &snap.entries[i]
			if err := x.decode(); err != nil {
				return err
			}
			if keep != nil && !keep(x.info.Meta) {
				continue
			}
			s := session.Summarized{Info: x.info}
			for _, r := range x.sums {
				if rec, err := transcript.Decode([]byte(r)); err == nil {
					if sum, ok := rec.(*transcript.Summary); ok {
						s.Summaries = append(s.Summaries, sum)
					}
				}
			}
			out = append(out, s)
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
	ok, err := ix.read(func(snap *snapshot, _ []*session.FileError) error {
		for i := len(snap.entries) - 1; i >= 0; i-- {
			if err := snap.entries[i].decode(); err != nil {
				return err
			}
			if p := snap.entries[i].info.Meta.Parent; p != nil && p.Session == parent {
				out = append(out, snap.entries[i].info)
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
	if _, _, err := ix.sync(id); err != nil {
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
// shown still matches its file; false otherwise.
func (ix *Index) quickTotals(keep func(transcript.Meta) bool, limit int) ([]session.Totals, []*session.FileError, bool) {
	d := statFile(ix.dir)
	if d.err != nil {
		return nil, nil, false
	}
	snap := ix.readSnapshot()
	if snap == nil || snap.dirMtime == 0 || snap.dirMtime != d.mtime || snap.dirIno != d.ino {
		return nil, nil, false
	}
	var out []session.Totals
	for i := range snap.entries {
		x := &snap.entries[i]
		if x.decode() != nil {
			return nil, nil, false
		}
		if keep != nil && !keep(x.info.Meta) {
			continue
		}
		if fs := statFile(filepath.Join(ix.dir, x.name+session.Ext)); fs.err != nil || fs.size != x.size || fs.mtime != x.mtime || fs.ino != x.ino {
			return nil, nil, false
		}
		out = append(out, session.Totals{Info: x.info, Turns: x.turns, Stop: x.stop, Finished: x.finished, Tail: x.tail})
		if len(out) == limit {
			break
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
