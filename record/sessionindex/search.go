package sessionindex

import (
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/record/session"
)

// maxTrigrams bounds the trigrams a query asks the full-text index for:
// enough to make a long literal rare, few enough to stay quick.
const maxTrigrams = 24

// Candidates returns the sessions whose lines hold every trigram of
// every fragment of q (session.Query.Fragments) in a text of the role and
// tool q asks for, newest first, with those lines sorted; false when no
// fragment is three characters long, when the index cannot narrow the
// search. The store is checked against the index first, as a listing
// checks it, so a session changed since it was indexed is indexed again
// before the index is asked.
//
// The check (a stat of every file) and the query are most of a search's
// time, and need not wait on each other in the usual case where nothing
// changed: the query is made while the files are checked, from the
// moment the snapshot they are checked against is open (so the database
// it reads is at least as far along as that snapshot), and its answer is
// used when every file matched the snapshot and the database is the one
// the snapshot was made from. Otherwise the query is made again, once
// the index was brought in step.
func (ix *Index) Candidates(q *session.Query) (*session.Narrowed, bool, error) {
	frags, never := q.Fragments()
	if never {
		return &session.Narrowed{Lines: map[string][]session.Span{}}, true, nil
	}
	match := ftsQuery(frags)
	if match == "" {
		return nil, false, nil
	}
	var ahead *speculation
	snap, skipped, fresh, err := ix.currentThen(readEntries, func() {
		ahead = ix.speculate(q, match)
		if testHookSpeculating != nil {
			testHookSpeculating(ahead)
		}
	}, true)
	if ahead != nil {
		<-ahead.done
	}
	if err != nil {
		_, err = ix.failed(err)
		return nil, false, err
	}
	if snap == nil {
		return nil, false, nil
	}
	var out *session.Narrowed
	if fresh && ahead != nil && ahead.err == nil && ahead.id == snap.db {
		out, err = ix.narrow(snap, ahead.lines)
	} else {
		out, err = ix.candidates(snap, q, match)
	}
	if err != nil {
		_, err = ix.failed(err)
		return nil, false, err
	}
	out.NotSessions = skipped
	return out, true, nil
}

// speculation is a query of the full-text table made while the files are
// checked (see Candidates): the id of the database it read, and the lines
// it found, by session.
type speculation struct {
	done  chan struct{}
	id    uint64
	lines map[string][]session.Span
	err   error
}

// testHookSpeculating, when not nil, is called with each speculation as
// soon as it started (a test changes the store then).
var testHookSpeculating func(*speculation)

// speculate opens the database and queries it on a goroutine of its own.
func (ix *Index) speculate(q *session.Query, match string) *speculation {
	s := &speculation{done: make(chan struct{})}
	go func() {
		defer close(s.done)
		ix.mu.Lock()
		db := ix.open()
		ix.mu.Unlock()
		if db == nil {
			s.err = errors.New("the index cannot be opened")
			return
		}
		if s.err = db.QueryRow("SELECT id FROM ident").Scan(&s.id); s.err != nil {
			return
		}
		s.lines, s.err = query(db, q, match)
	}()
	return s
}

// candidates queries the full-text table, once the database is known to
// be the one the snapshot was made from (else it is brought in step).
func (ix *Index) candidates(snap *snapshot, q *session.Query, match string) (*session.Narrowed, error) {
	ix.mu.Lock()
	db := ix.open()
	ix.mu.Unlock()
	if db == nil {
		return nil, errors.New("the index cannot be opened")
	}
	var id uint64
	err := db.QueryRow("SELECT id FROM ident").Scan(&id)
	if err != nil || id != snap.db {
		if snap, _, err = ix.rebuildSnapshot(snap); err != nil || snap == nil {
			return nil, fmt.Errorf("bringing the index in step: %v", err)
		}
		ix.mu.Lock()
		db = ix.db
		ix.mu.Unlock()
	}
	lines, err := query(db, q, match)
	if err != nil {
		return nil, err
	}
	return ix.narrow(snap, lines)
}

// query asks the full-text table for the lines that may match: by
// session, each session's lines sorted.
func query(db *sql.DB, q *session.Query, match string) (map[string][]session.Span, error) {
	query := `SELECT s.name, p.line, p.off, p.len FROM texts JOIN spans p ON p.rid = texts.rowid JOIN sessions s ON s.sid = p.sid
		WHERE texts MATCH ?`
	args := []any{match}
	if q.Role != "" {
		query += " AND p.role = ?"
		args = append(args, q.Role)
	}
	if q.Tool != "" {
		query += " AND (p.tool = ? OR p.tool IS NULL)"
		args = append(args, q.Tool)
	}
	rs, err := db.Query(query+" ORDER BY p.sid, p.line", args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	lines := map[string][]session.Span{}
	for rs.Next() {
		var name string
		var sp session.Span
		if err := rs.Scan(&name, &sp.Line, &sp.Off, &sp.Len); err != nil {
			return nil, err
		}
		l := lines[name]
		if n := len(l); n > 0 && l[n-1].Line == sp.Line {
			continue
		}
		lines[name] = append(l, sp)
	}
	return lines, rs.Err()
}

// narrow is the sessions lines names, in the snapshot's order; rows of
// sessions it does not list (gone since) are dropped.
func (ix *Index) narrow(snap *snapshot, lines map[string][]session.Span) (*session.Narrowed, error) {
	out := &session.Narrowed{Lines: map[string][]session.Span{}}
	var t session.Totals
	for i := range snap.entries {
		x := &snap.entries[i]
		l, ok := lines[x.name]
		if !ok {
			continue
		}
		if err := x.totals(ix.dir, &t); err != nil {
			return nil, err
		}
		out.Sessions = append(out.Sessions, t.Info)
		out.Lines[x.name] = l
		if len(out.Sessions) == len(lines) {
			break
		}
	}
	return out, nil
}

// ftsQuery is the FTS5 query asking for every trigram of the fragments
// ("" when none has one).
func ftsQuery(frags []string) string {
	seen := map[string]bool{}
	var grams []string
	for _, f := range frags {
		rs := []rune(f)
		for i := 0; i+3 <= len(rs); i++ {
			g := string(rs[i : i+3])
			if !seen[g] && utf8.ValidString(g) {
				seen[g] = true
				grams = append(grams, g)
			}
		}
	}
	if len(grams) > maxTrigrams {
		// Spread the picks over the fragments' whole length.
		picked := make([]string, 0, maxTrigrams)
		for i := range maxTrigrams {
			picked = append(picked, grams[i*len(grams)/maxTrigrams])
		}
		grams = picked
	}
	for i, g := range grams {
		grams[i] = `"` + strings.ReplaceAll(g, `"`, `""`) + `"`
	}
	return strings.Join(grams, " AND ")
}
