package session

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/record/transcript"
)

// Ref names one session: the directory its file is in and its id, the
// file's name without Ext. A session of the store has the store's
// directory; a .jsonl file named by its path (Store.Resolve) is a session
// too, in the directory it is in. The zero Ref names none.
type Ref struct {
	Dir string
	ID  string
}

// Path is the session's file, for what must have the file itself (a
// pager, "sessions path"); everything else takes the Ref.
func (r Ref) Path() string { return filepath.Join(r.Dir, r.ID+Ext) }

// IsZero reports whether r names no session.
func (r Ref) IsZero() bool { return r == Ref{} }

// refOf is the Ref of the session file at path.
func refOf(path string) Ref { return Ref{Dir: filepath.Dir(path), ID: FileID(path)} }

// Ref returns the Ref of the session the writer appends to.
func (w *Writer) Ref() Ref { return Ref{Dir: filepath.Dir(w.path), ID: w.id} }

// Last is the argument to Resolve that names the newest session.
const Last = "last"

// Resolve turns a command-line argument into the session it names: a full
// id, a unique prefix of one, Last for the newest session of the store, or
// a path to a .jsonl file (which need not be in the store). Anything else
// that could name a file outside the store is refused. For Last, the
// files the listing passed over are told to Skipped.
func (s *Store) Resolve(arg string) (Ref, error) {
	if arg != Last {
		return resolve(s.Dir, arg)
	}
	l, err := s.List()
	if err != nil {
		return Ref{}, err
	}
	if s.Skipped != nil && len(l.NotSessions) > 0 {
		s.Skipped(l.NotSessions)
	}
	if len(l.Sessions) == 0 {
		return Ref{}, fmt.Errorf("%w: there are no sessions in %s", ErrNotFound, s.Dir)
	}
	return l.Sessions[0].Ref, nil
}

// Holds reports whether r is a session of the store, not a file elsewhere.
func (s *Store) Holds(r Ref) bool {
	d, err1 := filepath.Abs(s.Dir)
	p, err2 := filepath.Abs(r.Dir)
	return err1 == nil && err2 == nil && p == d
}

// List reads the header of every session of the store, newest first (see
// Listing). A store that does not exist yet lists as empty.
func (s *Store) List() (*Listing, error) {
	if s.Index != nil {
		return s.Index.List()
	}
	return list(s.Dir)
}

// Children returns the sessions beside parent (in its directory) whose
// header names it as their parent session (subagents' child runs), oldest
// first: the order their calls were made in when they ran one after
// another.
func (s *Store) Children(parent Ref) ([]Info, error) {
	if ix := s.indexed(parent); ix != nil {
		return ix.Children(parent.ID)
	}
	return children(parent.Dir, parent.ID)
}

// Totals lists the sessions of the store whose header keep accepts (nil
// keeps all), newest first, with their turns and last stop reason, and
// the files a listing passes over in skipped. With limit above zero only
// the newest limit sessions kept are returned, and only theirs are read
// past the header, most of them from their last line alone.
func (s *Store) Totals(keep func(transcript.Meta) bool, limit int) (read []Totals, skipped []*FileError, err error) {
	if s.Index != nil {
		return s.Index.Totals(keep, limit)
	}
	return readDirTotals(s.Dir, keep, limit)
}

// Summaries reads the header and summary records of every session of the
// store whose header keep accepts (nil keeps all), newest first, in one
// pass, with the files a listing passes over in skipped.
func (s *Store) Summaries(keep func(transcript.Meta) bool) (read []Summarized, skipped []*FileError, err error) {
	if s.Index != nil {
		return s.Index.Summaries(keep)
	}
	return readDirSummaries(s.Dir, keep)
}

// Load reads the session r names whole (see Load).
func (s *Store) Load(r Ref) (*Session, error) { return Load(r.Path()) }

// Acquire takes the lock of the session r names, which need not exist
// yet (see Acquire): whatever writes in a session holds it.
func (s *Store) Acquire(r Ref) (*Lock, error) { return Acquire(r.Path()) }

// OpenWriter opens the session r names to append to it; the caller holds
// the session (Acquire) from before it reads it until it has closed the
// writer.
func (s *Store) OpenWriter(r Ref) (*Writer, error) {
	w, err := OpenWriter(r.Path())
	if err == nil {
		w.index = s.indexed(r)
	}
	return w, err
}

// Search calls fn with each match of q in the session r names, in file
// order, until fn returns false (see Query and Hit).
func (s *Store) Search(r Ref, q *Query, fn func(Hit) bool) error { return search(r.Path(), q, fn) }

// Remove deletes a session of the store while holding its lock, so that a
// session in use is never removed (a *BusyError) and none can be attached
// to while it goes; releasing the lock removes the lock file. A file
// outside the store is refused.
func (s *Store) Remove(r Ref) error {
	if !s.Holds(r) {
		return fmt.Errorf("session: %s is not in the session store %s", r.Path(), s.Dir)
	}
	lock, err := s.Acquire(r)
	if err != nil {
		return err
	}
	rerr := os.Remove(r.Path())
	if rerr == nil && s.Index != nil {
		s.Index.Removed(r.ID)
	}
	if err := lock.Release(); err != nil && rerr == nil {
		return err
	}
	if rerr != nil {
		return fmt.Errorf("session: %w", rerr)
	}
	return nil
}

// idOf is the id of a file name of the store: the name without Ext.
func idOf(name string) string { return strings.TrimSuffix(name, Ext) }
