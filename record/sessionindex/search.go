package sessionindex

import (
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
func (ix *Index) Candidates(q *session.Query) (*session.Narrowed, bool, error) {
	frags, never := q.Fragments()
	if never {
		return &session.Narrowed{Lines: map[string][]session.Span{}}, true, nil
	}
	match := ftsQuery(frags)
	if match == "" {
		return nil, false, nil
	}
	snap, skipped, err := ix.current(readEntries)
	if err != nil {
		ix.failed(err)
		return nil, false, nil
	}
	if snap == nil {
		return nil, false, nil
	}
	out, err := ix.candidates(snap, q, match)
	if err != nil {
		ix.failed(err)
		return nil, false, nil
	}
	out.NotSessions = skipped
	return out, true, nil
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
	if err := rs.Err(); err != nil {
		return nil, err
	}
	// The sessions, in the snapshot's order; rows of sessions it does not
	// list (gone since) are dropped.
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
