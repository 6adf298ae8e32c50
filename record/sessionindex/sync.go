package sessionindex

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"golang.org/x/sys/unix"
)

// fileStat is what tells a file changed.
type fileStat struct {
	size, mtime, ino int64
	regular, dir     bool
	err              error
}

// row is what the index holds of a file, as far as syncing goes.
type row struct {
	sid                    int64
	size, mtime, ino, done int64
	lines                  int
	prov                   bool
}

// state is the store as a sync found it: the sessions the index answers
// for, by file name, and the files it passes over.
type state struct {
	names   []string
	skipped []*session.FileError
}

// sync brings the index in step with the files (only the sessions only
// names, when it is not nil) and returns what it found; it returns nil
// state (and no error) when the index cannot be used.
func (ix *Index) sync(only []string) (*state, *sql.DB, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for attempt := 0; ; attempt++ {
		db := ix.open()
		if db == nil {
			return nil, nil, nil
		}
		st, err := ix.syncDB(db, only)
		if err == nil {
			return st, db, nil
		}
		if attempt == 0 && isCorrupt(err) && ix.rebuild(err) {
			continue
		}
		return nil, nil, err
	}
}

func (ix *Index) syncDB(db *sql.DB, only []string) (*state, error) {
	// The rows first, then the files: a row is written only after its
	// file exists, so a row whose file is not listed has lost its file
	// (read the other way round, a session created in between would be
	// taken for gone).
	rows, err := loadRows(db, only)
	if err != nil {
		return nil, err
	}
	var names []string
	if only != nil {
		for _, id := range only {
			names = append(names, id+session.Ext)
		}
	} else {
		var err error
		if names, err = session.SessionNames(ix.dir); err != nil {
			return nil, err
		}
	}
	stats := make([]fileStat, len(names))
	session.Parallel(len(names), func(i int) { stats[i] = statFile(filepath.Join(ix.dir, names[i])) })
	st := &state{}
	var work []job
	present := make(map[string]bool, len(names))
	for i, name := range names {
		id := strings.TrimSuffix(name, session.Ext)
		fs := stats[i]
		if fs.err != nil || !fs.regular {
			if only == nil || fs.err == nil {
				if _, fe := session.PeekFile(ix.dir, name); fe != nil {
					st.skipped = append(st.skipped, fe)
				}
			}
			continue
		}
		present[id] = true
		r, known := rows[id]
		if known && !r.prov && r.size == fs.size && r.mtime == fs.mtime && r.ino == fs.ino {
			st.names = append(st.names, id)
			continue
		}
		j := job{name: id, stat: fs, from: r, orig: r}
		if !known || r.ino != fs.ino || fs.size < r.done || (fs.size == r.size && fs.mtime != r.mtime) {
			j.from = row{sid: r.sid} // again from the start
			j.replace = known
		}
		j.known = known
		work = append(work, j)
	}
	var gone []int64
	for id, r := range rows {
		if !present[id] {
			if fs := statFile(filepath.Join(ix.dir, id+session.Ext)); fs.err == nil && fs.regular {
				continue // created after the directory was read
			}
			gone = append(gone, r.sid)
		}
	}
	if len(gone) > 0 {
		if err := forget(db, gone); err != nil {
			return nil, err
		}
	}
	if len(work) > 0 {
		done, skipped, wrote, err := ix.index(db, work, ix.announce(work))
		if err != nil {
			return nil, err
		}
		st.names = append(st.names, done...)
		st.skipped = append(st.skipped, skipped...)
		if wrote >= optimizeBytes {
			optimize(db)
		}
	}
	if len(work) > 0 || len(gone) > 0 {
		ix.checkpoint(db)
	}
	return st, nil
}

// optimizeBytes is how much text a sync writes (a first indexing, a
// reindex, a large catch-up) past which it merges the full-text index
// into one segment (see optimize).
var optimizeBytes = 32 << 20

// optimize merges the full-text index's segments into one. Indexing in
// batches leaves several, and a query seeks each of its trigrams in every
// one: over the 1 GB bench store, a query took 0.97 ms warm before and
// 0.30 ms after, for 0.2 s of merging once. Writing a session as it
// closes adds a small segment, which FTS5's automatic merging folds in.
// Best-effort: a failure leaves the segments as they were.
func optimize(db *sql.DB) {
	db.Exec("INSERT INTO texts(texts) VALUES('optimize')")
}

// walBytes is the size of the write-ahead log past which a sync that
// wrote empties it (see checkpoint).
var walBytes int64 = 1 << 20

// checkpoint copies what the write-ahead log holds into the database and
// empties the log, when no other process is reading an older state (it
// waits for one at most a moment, and gives up). A process that opens the
// database while no other has it open reads the whole log to rebuild its
// index (the -shm file), so a log left long by a large indexing would be
// read again by every search after.
//
// It is done once the log passes walBytes: emptying it costs the database
// file an fsync, which a recorded run closing its session need not pay for
// a log of a few pages.
func (ix *Index) checkpoint(db *sql.DB) {
	if st, err := os.Stat(ix.path + "-wal"); err != nil || st.Size() < walBytes {
		return
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "PRAGMA busy_timeout = 100"); err != nil {
		return
	}
	conn.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
	conn.ExecContext(ctx, "PRAGMA busy_timeout = 60000")
}

func statFile(path string) fileStat {
	var st unix.Stat_t
	for {
		err := unix.Stat(path, &st)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fileStat{err: err}
		}
		break
	}
	return toFileStat(&st)
}

func loadRows(db *sql.DB, only []string) (map[string]row, error) {
	q := "SELECT sid, name, size, mtime, ino, done, lines, prov FROM sessions"
	var args []any
	if only != nil {
		if len(only) == 0 {
			return map[string]row{}, nil
		}
		q += " WHERE name IN (" + strings.Repeat(",?", len(only))[1:] + ")"
		for _, id := range only {
			args = append(args, id)
		}
	}
	rs, err := db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := map[string]row{}
	for rs.Next() {
		var r row
		var name string
		if err := rs.Scan(&r.sid, &name, &r.size, &r.mtime, &r.ino, &r.done, &r.lines, &r.prov); err != nil {
			return nil, err
		}
		out[name] = r
	}
	return out, rs.Err()
}

// forget removes the rows of sessions.
func forget(db *sql.DB, sids []int64) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	t := &txn{tx: tx}
	for _, sid := range sids {
		if err := dropFrom(t, sid, 0); err != nil {
			return err
		}
		if _, err := t.Exec("DELETE FROM sessions WHERE sid = ?", sid); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// dropFrom removes a session's summaries and texts after line lines.
func dropFrom(tx *txn, sid int64, lines int) error {
	if _, err := tx.Exec("DELETE FROM texts WHERE rowid IN (SELECT rid FROM spans WHERE sid = ? AND line > ?)", sid, lines); err != nil {
		return err
	}
	if _, err := tx.Exec("DELETE FROM spans WHERE sid = ? AND line > ?", sid, lines); err != nil {
		return err
	}
	_, err := tx.Exec("DELETE FROM sums WHERE sid = ? AND line > ?", sid, lines)
	return err
}

// announceBytes and announceFiles are how much indexing work is large:
// said before it starts (the first reader of a large store pays for
// indexing it, minutes for gigabytes, and a command silent that long looks
// hung), stopped by StopOn, handed to SetBackfill's start.
var (
	announceBytes int64 = 256 << 20
	announceFiles       = 10000
)

// large reports whether indexing files sessions of bytes bytes is large.
func large(files int, bytes int64) bool { return files >= announceFiles || bytes >= announceBytes }

// announce tells warn, in one line, that a large piece of indexing starts,
// and reports whether it is one (StopOn stops only those).
func (ix *Index) announce(work []job) bool {
	var n int64
	for _, j := range work {
		n += j.stat.size - j.from.done
	}
	if !large(len(work), n) {
		return false
	}
	if ix.warn != nil {
		ix.warn(fmt.Sprintf("indexing %d sessions (%.1f MB) for listing and search: this once, then only what changes", len(work), float64(n)/(1<<20)))
	}
	return true
}

// job is one file to index.
type job struct {
	name    string
	stat    fileStat
	from    row // where indexing starts: done and lines (zero: the start)
	orig    row // the file's row as the sync found it
	known   bool
	replace bool
}

// parsed is what reading a job's file gave.
type parsed struct {
	job
	stat      fileStat // as fstat said when it was read
	info      session.Info
	header    []byte
	done      int64
	lines     int
	prov      bool // a final line with no newline was read
	tailTurns *int
	keepTail  bool
	torn      bool
	sums      []sumRow
	spans     []spanRow
	skip      *session.FileError
	err       error
}

type sumRow struct {
	line int
	rec  []byte
}

type spanRow struct {
	line       int
	off        int64
	len        int
	role, tool string
	hasTool    bool
	text       string
}

// txn is a transaction that prepares each statement once and reuses it:
// through database/sql every Exec with SQL text prepared it anew, so the
// indexing of each span parsed the same two statements again (a sixth of
// a first indexing's CPU was SQLite's parser). A statement prepared on the
// transaction is closed with it.
type txn struct {
	tx    *sql.Tx
	stmts map[string]*sql.Stmt
}

func (t *txn) prepared(query string) (*sql.Stmt, error) {
	if st, ok := t.stmts[query]; ok {
		return st, nil
	}
	st, err := t.tx.Prepare(query)
	if err != nil {
		return nil, err
	}
	if t.stmts == nil {
		t.stmts = map[string]*sql.Stmt{}
	}
	t.stmts[query] = st
	return st, nil
}

func (t *txn) Exec(query string, args ...any) (sql.Result, error) {
	st, err := t.prepared(query)
	if err != nil {
		return nil, err
	}
	return st.Exec(args...)
}

func (t *txn) Query(query string, args ...any) (*sql.Rows, error) {
	st, err := t.prepared(query)
	if err != nil {
		return nil, err
	}
	return st.Query(args...)
}

func (t *txn) QueryRow(query string, args ...any) *sql.Row {
	st, err := t.prepared(query)
	if err != nil {
		return t.tx.QueryRow(query, args...) // says why it could not be prepared
	}
	return st.QueryRow(args...)
}

// testHookCommitted, when not nil, is called after each transaction of an
// indexing commits (a test interrupts it there).
var testHookCommitted func()

// batchBytes is how much text a transaction takes before it commits, so
// that a first indexing of a large store is not one huge transaction.
var batchBytes = 32 << 20

// index reads the jobs' files on one goroutine per core and writes what
// they hold, in transactions of about batchBytes. An announced indexing
// stops at an interrupt (StopOn), committing what it has.
func (ix *Index) index(db *sql.DB, work []job, announced bool) (names []string, skipped []*session.FileError, wrote int, err error) {
	out := make(chan *parsed, 16)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	var stop bool
	for range min(runtime.GOMAXPROCS(0), len(work)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				s := stop
				mu.Unlock()
				if i >= len(work) || s {
					return
				}
				out <- readJob(ix.dir, work[i])
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	defer func() {
		mu.Lock()
		stop = true
		mu.Unlock()
		for range out {
		}
	}()
	var tx *txn
	pending := 0
	commit := func() error {
		if tx == nil {
			return nil
		}
		err := tx.tx.Commit()
		tx = nil
		pending = 0
		if err == nil && testHookCommitted != nil {
			testHookCommitted()
		}
		return err
	}
	defer func() {
		if tx != nil {
			tx.tx.Rollback()
		}
	}()
	for p := range out {
		if announced && ix.interrupted() {
			if err := commit(); err != nil {
				return nil, nil, 0, err
			}
			return nil, nil, 0, ErrInterrupted
		}
		if p.skip != nil {
			skipped = append(skipped, p.skip)
			continue
		}
		if p.err != nil {
			// Unreadable now: listed as the index last had it, if at all.
			if p.known {
				names = append(names, p.name)
			}
			continue
		}
		if tx == nil {
			t, err := db.Begin()
			if err != nil {
				return nil, nil, 0, err
			}
			tx = &txn{tx: t}
		}
		n, err := write(tx, p)
		if err != nil {
			return nil, nil, 0, err
		}
		wrote += n
		names = append(names, p.name)
		if pending += n; pending >= batchBytes {
			if err := commit(); err != nil {
				return nil, nil, 0, err
			}
		}
	}
	if err := commit(); err != nil {
		return nil, nil, 0, err
	}
	return names, skipped, wrote, nil
}

// readJob reads a file from where its indexing stopped.
func readJob(dir string, j job) *parsed {
	p := &parsed{job: j, done: j.from.done, lines: j.from.lines}
	path := filepath.Join(dir, j.name+session.Ext)
	if j.from.done == 0 {
		info, fe := session.PeekFile(dir, j.name+session.Ext)
		if fe != nil {
			p.skip = fe
			return p
		}
		p.info = info
	}
	fd, st, err := safeopen.OpenFD(path)
	if err != nil {
		p.err = err
		return p
	}
	defer syscall.Close(fd)
	p.stat = fileStat{size: st.Size, mtime: st.Mtim.Nano(), ino: int64(st.Ino), regular: true}
	if p.stat.ino != j.stat.ino {
		p.err = errors.New("replaced while read")
		return p
	}
	p.read(fd, st.Size)
	return p
}

func preadFull(fd int, b []byte, off int64) error {
	for len(b) > 0 {
		n, err := syscall.Pread(fd, b, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("file shrank while read")
		}
		b, off = b[n:], off+int64(n)
	}
	return nil
}

// read indexes the file's bytes from p.done to size, a few MiB at a time.
func (p *parsed) read(fd int, size int64) {
	tools := map[string]string{}
	chunk := int64(4 << 20)
	var last []byte
	saw := false
	for p.done < size {
		n := min(chunk, size-p.done)
		data := make([]byte, n)
		if err := preadFull(fd, data, p.done); err != nil {
			p.err = err
			return
		}
		end := bytes.LastIndexByte(data, '\n')
		if end < 0 && p.done+n < size {
			chunk *= 2 // a line longer than the chunk
			continue
		}
		if end < 0 {
			p.tail(data, tools)
			break
		}
		base, pos := p.done, 0
		for pos <= end {
			nl := bytes.IndexByte(data[pos:], '\n')
			line := data[pos : pos+nl]
			p.lines++
			if p.lines == 1 {
				p.header = bytes.Clone(line)
			} else {
				p.line(line, p.lines, base+int64(pos), tools)
			}
			last, saw = line, true
			pos += nl + 1
		}
		p.done = base + int64(pos)
		if p.done+n-int64(pos) >= size && int64(pos) < n {
			p.tail(data[pos:], tools)
			break
		}
	}
	switch {
	case p.torn:
	case saw:
		if t, ok := session.TailTurns(last); ok {
			p.tailTurns = &t
		}
	default:
		p.keepTail = true // nothing new: the last line is the one indexed
	}
}

// tail indexes a final line with no newline (a record being written, or
// torn by a process that died) as it is, to be read again next time.
func (p *parsed) tail(rest []byte, tools map[string]string) {
	p.torn, p.prov = true, true
	if p.lines == 0 {
		p.header = bytes.Clone(rest)
	} else {
		p.line(rest, p.lines+1, p.done, tools)
	}
}

// line indexes one line of the transcript (never the header).
func (p *parsed) line(line []byte, n int, off int64, tools map[string]string) {
	if len(line) > transcript.MaxLine || len(bytes.TrimSpace(line)) == 0 {
		return
	}
	rec, err := transcript.Decode(line)
	if err != nil {
		return
	}
	switch rec.(type) {
	case *transcript.Summary:
		p.sums = append(p.sums, sumRow{line: n, rec: bytes.Clone(line)})
		return
	case *transcript.Message, *transcript.Compaction, *transcript.ToolCall:
	default:
		return
	}
	type key struct {
		role, tool string
		known      bool
	}
	groups := map[key]*strings.Builder{}
	var order []key
	session.Texts(rec, tools, func(t session.Text) {
		k := key{t.Role, t.Tool, t.CallID == ""}
		b := groups[k]
		if b == nil {
			b = &strings.Builder{}
			groups[k] = b
			order = append(order, k)
		} else {
			b.WriteByte('\n')
		}
		b.WriteString(t.Text)
	})
	for _, k := range order {
		p.spans = append(p.spans, spanRow{line: n, off: off, len: len(line), role: k.role, tool: k.tool, hasTool: k.known, text: groups[k].String()})
	}
}

// write writes what a file held, in tx, unless another process indexed
// it meanwhile; it returns about how many bytes it wrote.
func write(tx *txn, p *parsed) (int, error) {
	var cur row
	err := tx.QueryRow("SELECT sid, size, mtime, ino, done, lines, prov FROM sessions WHERE name = ?", p.name).
		Scan(&cur.sid, &cur.size, &cur.mtime, &cur.ino, &cur.done, &cur.lines, &cur.prov)
	known := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	if known != p.known || known && cur != p.orig {
		return 0, nil // another process got there first; the next read catches up
	}
	sid := cur.sid
	if known {
		keep := p.from.lines
		if p.from.done == 0 {
			keep = 0
		}
		if err := dropFrom(tx, sid, keep); err != nil {
			return 0, err
		}
	}
	if p.from.done == 0 {
		m := p.info.Meta
		ts, ns := m.CreatedAt.Unix(), m.CreatedAt.Nanosecond()
		rich := !plainHeader(&m)
		var parent, call any
		if m.Parent != nil {
			parent, call = m.Parent.Session, m.Parent.CallID
		}
		args := []any{ts, ns, m.CreatedAt.Format(time.RFC3339Nano), m.Format, m.Provider, m.Model, m.Workspace, m.Title,
			session.Kind(&m), m.ReplayOf, m.RerunOf, m.ReflectsOn, m.Distill, parent, call, rich, p.header, p.info.HeaderID}
		if known {
			_, err = tx.Exec(`UPDATE sessions SET ts=?, ns=?, created=?, format=?, provider=?, model=?, workspace=?, title=?,
				kind=?, replay_of=?, rerun_of=?, reflects_on=?, distill=?, parent=?, parent_call=?, rich=?, header=?, header_id=? WHERE sid=?`, append(args, sid)...)
		} else {
			var res sql.Result
			res, err = tx.Exec(`INSERT INTO sessions(name, size, mtime, ino, done, lines, prov, ts, ns, created, format, provider, model, workspace, title,
				kind, replay_of, rerun_of, reflects_on, distill, parent, parent_call, rich, header, header_id,
				turns, stop, finished, tail_turns, torn, input, output, cache_read, cache_write)
				VALUES(?, 0, 0, 0, 0, 0, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, '', 0, NULL, 0, 0, 0, 0, 0)`, append([]any{p.name}, args...)...)
			if err == nil {
				sid, err = res.LastInsertId()
			}
		}
		if err != nil {
			return 0, err
		}
	}
	n := 0
	for _, s := range p.sums {
		if _, err := tx.Exec("INSERT OR REPLACE INTO sums(sid, line, rec) VALUES(?, ?, ?)", sid, s.line, s.rec); err != nil {
			return 0, err
		}
		n += len(s.rec)
	}
	for _, s := range p.spans {
		var tool any
		if s.hasTool {
			tool = s.tool
		}
		res, err := tx.Exec("INSERT INTO spans(sid, line, off, len, role, tool) VALUES(?, ?, ?, ?, ?, ?)", sid, s.line, s.off, s.len, s.role, tool)
		if err != nil {
			return 0, err
		}
		rid, err := res.LastInsertId()
		if err != nil {
			return 0, err
		}
		if _, err := tx.Exec("INSERT INTO texts(rowid, text) VALUES(?, ?)", rid, s.text); err != nil {
			return 0, err
		}
		n += len(s.text)
	}
	if err := totals(tx, sid, p); err != nil {
		return 0, err
	}
	_, err = tx.Exec("UPDATE sessions SET size=?, mtime=?, ino=?, done=?, lines=?, prov=? WHERE sid=?",
		p.stat.size, p.stat.mtime, p.stat.ino, p.done, p.lines, p.prov, sid)
	return n + 256, err
}

// totals works out a session's totals again from its summaries.
func totals(tx *txn, sid int64, p *parsed) error {
	rs, err := tx.Query("SELECT rec FROM sums WHERE sid = ? ORDER BY line", sid)
	if err != nil {
		return err
	}
	var sums []*transcript.Summary
	for rs.Next() {
		var b []byte
		if err := rs.Scan(&b); err != nil {
			rs.Close()
			return err
		}
		if rec, err := transcript.Decode(b); err == nil {
			if s, ok := rec.(*transcript.Summary); ok {
				sums = append(sums, s)
			}
		}
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	turns, stop, finished := session.SumTotals(sums)
	var u transcript.Usage
	for _, s := range sums {
		u = u.Add(s.Usage)
	}
	var tail any
	if p.tailTurns != nil {
		tail = *p.tailTurns
	}
	tailSQL := "?"
	if p.keepTail {
		tailSQL = "tail_turns"
		tail = nil
	}
	_, err = tx.Exec("UPDATE sessions SET turns=?, stop=?, finished=?, tail_turns="+tailSQL+", torn=?, input=?, output=?, cache_read=?, cache_write=? WHERE sid=?",
		append(append([]any{turns, stop, finished}, tailArgs(tail, p.keepTail)...), p.torn, int64(u.InputTokens), int64(u.OutputTokens), int64(u.CacheReadTokens), int64(u.CacheWriteTokens), sid)...)
	return err
}

func tailArgs(tail any, keep bool) []any {
	if keep {
		return nil
	}
	return []any{tail}
}
