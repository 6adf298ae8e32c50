package sessionindex

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/mecha-agent/mecha/internal/textfmt"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Name is the index's database under the store's directory: in a
// directory of its own, so that its files coming and going never change
// the store directory's mtime (which a limited listing trusts; see
// Index.Totals).
const Name = ".index/index.sqlite"

// version is the schema's, and of what its rows mean; an index of another
// version is rebuilt. 2: a header whose fields the columns cannot give
// back is kept whole (version 1 dropped a fork's origin).
const version = 2

// appID marks the file as mecha's index ("mech").
const appID = 0x6d656368

const schema = `
CREATE TABLE sessions(
	sid INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE,
	size INTEGER NOT NULL, mtime INTEGER NOT NULL, ino INTEGER NOT NULL,
	done INTEGER NOT NULL, lines INTEGER NOT NULL, prov INTEGER NOT NULL,
	ts INTEGER NOT NULL, ns INTEGER NOT NULL, created TEXT NOT NULL,
	format INTEGER NOT NULL, provider TEXT NOT NULL, model TEXT NOT NULL,
	workspace TEXT NOT NULL, title TEXT NOT NULL, kind TEXT NOT NULL,
	replay_of TEXT NOT NULL, rerun_of TEXT NOT NULL, reflects_on TEXT NOT NULL, distill INTEGER NOT NULL,
	parent TEXT, parent_call TEXT,
	rich INTEGER NOT NULL, header BLOB NOT NULL, header_id TEXT NOT NULL,
	turns INTEGER NOT NULL, stop TEXT NOT NULL, finished INTEGER NOT NULL,
	tail_turns INTEGER, torn INTEGER NOT NULL,
	input INTEGER NOT NULL, output INTEGER NOT NULL, cache_read INTEGER NOT NULL, cache_write INTEGER NOT NULL
);
CREATE INDEX sessions_newest ON sessions(ts DESC, ns DESC, name DESC);
CREATE INDEX sessions_parent ON sessions(parent) WHERE parent IS NOT NULL;
CREATE TABLE sums(sid INTEGER NOT NULL, line INTEGER NOT NULL, rec BLOB NOT NULL, PRIMARY KEY(sid, line)) WITHOUT ROWID;
CREATE TABLE spans(rid INTEGER PRIMARY KEY, sid INTEGER NOT NULL, line INTEGER NOT NULL,
	off INTEGER NOT NULL, len INTEGER NOT NULL, role TEXT NOT NULL, tool TEXT);
CREATE INDEX spans_sid ON spans(sid, line);
CREATE TABLE ident(id INTEGER NOT NULL);
CREATE VIRTUAL TABLE texts USING fts5(text, tokenize='trigram case_sensitive 1', detail=none, content='', contentless_delete=1);
`

var (
	registry   = map[string]*Index{}
	registryMu sync.Mutex
)

// For returns the index of the store in dir, shared by every caller in
// the process; warn (nil: nobody) is told, once, what went wrong with it.
// Nothing is opened until it is first read.
func For(dir string, warn func(string)) *Index {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if ix := registry[abs]; ix != nil {
		if ix.warn == nil {
			ix.warn = warn
		}
		return ix
	}
	ix := &Index{dir: dir, path: filepath.Join(dir, Name), warn: warn}
	registry[abs] = ix
	return ix
}

// Index is the index of one store. Its methods are safe for concurrent use.
type Index struct {
	dir, path string
	warn      func(string)

	mu     sync.Mutex // opening, and one sync at a time in the process
	db     *sql.DB
	broken bool // unusable: the files are read instead
	warned bool

	optMu    sync.Mutex // not mu: StopOn and SetBackfill must not wait for a sync to end
	stop     <-chan struct{}
	backfill func(files int, bytes int64) bool
}

// ErrInterrupted is what a reader returns when the indexing it said it
// was starting (the one line of a large first indexing) was stopped by
// StopOn's channel: what was committed before is kept.
var ErrInterrupted = errors.New("interrupted while indexing the sessions (what was indexed is kept; the next command goes on from there)")

// StopOn makes an indexing large enough to be announced on warn stop when
// done is closed (an interrupt): it commits what it has and the reader
// returns ErrInterrupted, rather than finishing minutes of work first. A
// small catch-up (a few sessions) always finishes. It returns ix.
func (ix *Index) StopOn(done <-chan struct{}) *Index {
	ix.optMu.Lock()
	defer ix.optMu.Unlock()
	ix.stop = done
	return ix
}

// SetBackfill gives a reader that finds a large indexing to do (one that
// would be announced: a first indexing of thousands of sessions or
// hundreds of megabytes, minutes for gigabytes) start to do it elsewhere,
// in a process of its own, rather than make the person wait: when start
// returns true, this reader reads the transcripts, as without an index.
// start is told the number of sessions and bytes to index. nil (the
// default) indexes in the reader. It returns ix.
func (ix *Index) SetBackfill(start func(files int, bytes int64) bool) *Index {
	ix.optMu.Lock()
	defer ix.optMu.Unlock()
	ix.backfill = start
	return ix
}

// CatchUp brings the index in step with the store here, as a reader does
// but never handing the work to SetBackfill's start (the process that
// start started calls it): the number of sessions it lists.
func (ix *Index) CatchUp() (int, error) {
	snap, _, _, err := ix.currentThen(readEntries, nil, false)
	return ix.listed(snap, err)
}

// interrupted reports whether StopOn's channel is closed.
func (ix *Index) interrupted() bool {
	ix.optMu.Lock()
	stop := ix.stop
	ix.optMu.Unlock()
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// say tells warn one line, once.
func (ix *Index) say(format string, args ...any) {
	if ix.warned || ix.warn == nil {
		return
	}
	ix.warned = true
	ix.warn(fmt.Sprintf(format, args...))
}

// open opens the database once, creating or rebuilding it as needed; it
// returns nil when the index cannot be used (the store does not exist,
// or the index cannot be written). Called with mu held.
func (ix *Index) open() *sql.DB {
	if ix.db != nil || ix.broken {
		return ix.db
	}
	if st, err := os.Stat(ix.dir); err != nil || !st.IsDir() {
		return nil // no store yet: the scans say so
	}
	db, err := openDB(ix.path)
	if err == nil {
		err = ensureSchema(db)
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		if isPermission(err) {
			ix.broken = true
			ix.say("the session index %s cannot be written (%v); reading the transcripts instead", ix.path, short(err))
			return nil
		}
		if db = ix.remake(err); db == nil {
			return nil
		}
	}
	ix.db = db
	return db
}

// remake makes the index again after cause made it unusable, and says so
// in one line: that it is being rebuilt, or, when it cannot be made at
// all (its directory is a file, say), why, and that the transcripts are
// read instead (the index is then broken). Called with mu held.
func (ix *Index) remake(cause error) *sql.DB {
	db, err := ix.recreate()
	if err != nil {
		ix.broken = true
		ix.say("the session index %s cannot be made (%v); reading the transcripts instead", ix.path, short(err))
		return nil
	}
	var ve *versionError
	if errors.As(cause, &ve) {
		ix.say("the session index %s was made by another version of mecha (index version %d, this one's is %d); rebuilding it", ix.path, ve.version, version)
	} else {
		ix.say("the session index %s was unusable (%v); rebuilding it", ix.path, short(cause))
	}
	return db
}

// versionError is an index of another version than this build's.
type versionError struct{ version int }

func (e *versionError) Error() string {
	return fmt.Sprintf("an index of another version (%d)", e.version)
}

// recreate removes the index's files and makes a new one.
func (ix *Index) recreate() (*sql.DB, error) {
	os.Remove(ix.listPath())
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(ix.path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	db, err := openDB(ix.path)
	if err != nil {
		return nil, err
	}
	if err := ensureSchema(db); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// rebuild is recreate after the index failed while in use. Called with mu
// held.
func (ix *Index) rebuild(cause error) bool {
	if ix.db != nil {
		ix.db.Close()
		ix.db = nil
	}
	ix.db = ix.remake(cause)
	return ix.db != nil
}

func openDB(path string) (*sql.DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	q := url.Values{}
	for _, p := range []string{"busy_timeout(60000)", "journal_mode(WAL)", "synchronous(NORMAL)", "foreign_keys(OFF)"} {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(2)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, err
	}
	// The file is the store's: owner-only, as the transcripts are.
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Chmod(path+suffix, 0o600)
	}
	return db, nil
}

// ensureSchema creates the schema in an empty database and checks it in
// any other: another application's file or another version is an error.
func ensureSchema(db *sql.DB) error {
	var app, ver int
	if err := db.QueryRow("PRAGMA application_id").Scan(&app); err != nil {
		return err
	}
	if err := db.QueryRow("PRAGMA user_version").Scan(&ver); err != nil {
		return err
	}
	if app == appID && ver == version {
		var n int
		return db.QueryRow("SELECT count(*) FROM sessions WHERE sid < 0").Scan(&n)
	}
	// The two reads above are not one snapshot: another process making
	// the index between them shows one field set and not the other. Read
	// both again under the write lock before judging.
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.QueryRow("PRAGMA application_id").Scan(&app); err != nil {
		return err
	}
	if err := tx.QueryRow("PRAGMA user_version").Scan(&ver); err != nil {
		return err
	}
	if app == appID && ver == version {
		return tx.Commit() // another process made it meanwhile
	}
	if app != 0 || ver != 0 {
		return &versionError{ver}
	}
	var tables int
	if err := tx.QueryRow("SELECT count(*) FROM sqlite_master").Scan(&tables); err != nil {
		return err
	}
	if tables > 0 {
		return errors.New("a database that is not mecha's index")
	}
	if _, err := tx.Exec(schema); err != nil {
		return err
	}
	if _, err := tx.Exec("INSERT INTO ident(id) VALUES(abs(random()))"); err != nil {
		return err
	}
	if _, err := tx.Exec(fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", appID, version)); err != nil {
		return err
	}
	return tx.Commit()
}

func isPermission(err error) bool {
	return errors.Is(err, os.ErrPermission) || errors.Is(err, syscall.EROFS) ||
		strings.Contains(err.Error(), "readonly") || strings.Contains(err.Error(), "unable to open database")
}

// isCorrupt reports an error that says the file is not a usable index.
func isCorrupt(err error) bool {
	if err == nil {
		return false
	}
	s := err.Error()
	return strings.Contains(s, "malformed") || strings.Contains(s, "not a database") ||
		strings.Contains(s, "no such table") || strings.Contains(s, "no such column") || strings.Contains(s, "corrupt")
}

// short is an error's text on one line, at most 120 characters, the last
// a mark where it was clipped (between two characters: a path in the text
// may be any UTF-8).
func short(err error) string {
	return textfmt.Clip(textfmt.OneLine(err.Error()), 120)
}

// Close closes the database, if it was opened; the Index opens it again
// when next read.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return nil
	}
	err := ix.db.Close()
	ix.db = nil
	return err
}
