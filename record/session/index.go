package session

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/mecha-agent/mecha/record/transcript"
)

// An Index answers a store's listings from a cache kept beside its files
// (record/sessionindex keeps one in SQLite), so that listing, totalling,
// finding children and naming the newest session cost about the same
// whatever the size of the transcripts. The files stay the truth: an index
// checks each file against what it holds before it answers, and what it
// answers is what the scans of this package (ScanList, ScanTotals,
// ScanSummaries, ScanChildren) answer over the same files. A Store with no
// Index reads the files.
type Index interface {
	List() (*Listing, error)
	Totals(keep func(transcript.Meta) bool, limit int) ([]Totals, []*FileError, error)
	Summaries(keep func(transcript.Meta) bool) ([]Summarized, []*FileError, error)
	Children(parent string) ([]Info, error)
	// Candidates returns the sessions that may hold a match of q, with
	// the lines that may (a superset of those that do, each to be
	// verified with Store.SearchLines), or false when it cannot narrow q.
	Candidates(q *Query) (*Narrowed, bool, error)
	// Closed is told that a writer closed the session id, Removed that
	// the session's file was removed: best-effort, never failing what
	// told it.
	Closed(id string)
	Removed(id string)
}

// Narrowed is a search of the store narrowed by its index: the sessions
// that may hold a match, newest first, and in each the lines that may.
type Narrowed struct {
	Sessions []Info
	Lines    map[string][]Span // by session id
	// NotSessions are the .jsonl files a listing passes over, as
	// Listing.NotSessions.
	NotSessions []*FileError
}

// Candidates narrows a search of the store to the sessions and lines that
// may hold a match of q, when its index can (see Index.Candidates).
func (s *Store) Candidates(q *Query) (*Narrowed, bool, error) {
	if s.Index == nil {
		return nil, false, nil
	}
	return s.Index.Candidates(q)
}

// ScanList is Store.List read from the files of dir, with no index.
func ScanList(dir string) (*Listing, error) { return list(dir) }

// ScanTotals is Store.Totals read from the files of dir, with no index.
func ScanTotals(dir string, keep func(transcript.Meta) bool, limit int) ([]Totals, []*FileError, error) {
	return readDirTotals(dir, keep, limit)
}

// ScanSummaries is Store.Summaries read from the files of dir, with no
// index.
func ScanSummaries(dir string, keep func(transcript.Meta) bool) ([]Summarized, []*FileError, error) {
	return readDirSummaries(dir, keep)
}

// ScanChildren is Store.Children read from the files of dir, with no
// index.
func ScanChildren(dir, parent string) ([]Info, error) { return children(dir, parent) }

// indexed is the store's index when r is one of its sessions.
func (s *Store) indexed(r Ref) Index {
	if s.Index == nil || !s.Holds(r) {
		return nil
	}
	return s.Index
}

// PeekFile reads the header of the file name in dir as a listing does: the
// session it is, or why a listing passes over it.
func PeekFile(dir, name string) (Info, *FileError) {
	path := filepath.Join(dir, name)
	in := Info{Ref: Ref{Dir: dir, ID: idOf(name)}}
	var err error
	in.Meta, in.HeaderID, err = peekMeta(path)
	if err != nil {
		return Info{}, skipped(path, err)
	}
	return in, nil
}

// SessionNames returns the names of the .jsonl files in dir that are not
// directories; a missing dir has none.
func SessionNames(dir string) ([]string, error) {
	names, err := sessionNames(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return names, err
}

// SumTotals is what summaries add up to, as Totals has it: turns summed
// (saturating), the last stop reason, and whether there is any.
func SumTotals(sums []*transcript.Summary) (turns int, stop string, finished bool) {
	return sumTotals(sums)
}

// TailTurns returns the turns a summary line carries for its whole
// session (session_turns) when the line is one a listing trusts as the
// last line of a file: a summary in the canonical layout that decodes.
func TailTurns(line []byte) (turns int, ok bool) {
	if summary, known := canonicalKind(line); !summary || !known {
		return 0, false
	}
	rec, err := transcript.Decode(line)
	if err != nil {
		return 0, false
	}
	if s, isSum := rec.(*transcript.Summary); isSum && s.SessionTurns != nil {
		return *s.SessionTurns, true
	}
	return 0, false
}
