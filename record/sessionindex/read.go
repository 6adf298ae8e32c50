package sessionindex

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

var _ session.Index = (*Index)(nil)

// listed is a session as the index lists it.
type listed struct {
	session.Totals
	sid int64
}

const listColumns = `sid, name, created, format, provider, model, workspace, title, replay_of, rerun_of, reflects_on, distill,
	parent, parent_call, rich, header, header_id, coalesce(tail_turns, turns), stop, finished, tail_turns IS NOT NULL`

// rows lists the sessions of st (all of them, newest first) whose header
// keep accepts, at most limit of them when limit is above zero.
func (ix *Index) rows(db *sql.DB, st *state, where string, args []any, order string, keep func(transcript.Meta) bool, limit int) ([]listed, error) {
	want := make(map[string]bool, len(st.names))
	for _, n := range st.names {
		want[n] = true
	}
	q := "SELECT " + listColumns + " FROM sessions"
	if where != "" {
		q += " WHERE " + where
	}
	rs, err := db.Query(q+" ORDER BY "+order, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []listed
	for rs.Next() {
		var l listed
		var name, created, parent, call sql.NullString
		var header []byte
		var rich bool
		m := &l.Meta
		if err := rs.Scan(&l.sid, &name, &created, &m.Format, &m.Provider, &m.Model, &m.Workspace, &m.Title, &m.ReplayOf, &m.RerunOf,
			&m.ReflectsOn, &m.Distill, &parent, &call, &rich, &header, &l.HeaderID, &l.Turns, &l.Stop, &l.Finished, &l.Tail); err != nil {
			return nil, err
		}
		if !want[name.String] {
			continue // a file that has gone, or is no longer a session
		}
		l.Ref = session.Ref{Dir: ix.dir, ID: name.String}
		if rich {
			dm, err := transcript.DecodeMeta(header)
			if err != nil {
				return nil, fmt.Errorf("a header it holds does not decode: %w", err)
			}
			*m = *dm
		} else {
			if m.CreatedAt, err = time.Parse(time.RFC3339Nano, created.String); err != nil {
				return nil, err
			}
			if parent.Valid {
				m.Parent = &transcript.ParentCall{Session: parent.String, CallID: call.String}
			}
		}
		m.ID = name.String
		if keep != nil && !keep(*m) {
			continue
		}
		out = append(out, l)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out, rs.Err()
}

const newest = "ts DESC, ns DESC, name DESC"

// read runs fn on the index brought in step, or returns false when the
// index cannot be used (the caller then reads the files). A corrupt index
// met while reading is rebuilt, once.
func (ix *Index) read(fn func(db *sql.DB, st *state) error) (bool, error) {
	for attempt := 0; ; attempt++ {
		st, db, err := ix.sync("")
		if err != nil {
			return ix.failed(err)
		}
		if st == nil {
			return false, nil
		}
		err = fn(db, st)
		if err == nil {
			return true, nil
		}
		if attempt == 0 && isCorrupt(err) {
			ix.mu.Lock()
			ok := ix.rebuild(err)
			ix.mu.Unlock()
			if ok {
				continue
			}
		}
		return ix.failed(err)
	}
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
	ok, err := ix.read(func(db *sql.DB, st *state) error {
		rows, err := ix.rows(db, st, "", nil, newest, nil, 0)
		if err != nil {
			return err
		}
		l.Sessions = make([]session.Info, len(rows))
		for i := range rows {
			l.Sessions[i] = rows[i].Info
		}
		l.NotSessions = st.skipped
		return nil
	})
	if !ok && err == nil {
		return session.ScanList(ix.dir)
	}
	return l, err
}

// Totals is session.Store.Totals from the index.
func (ix *Index) Totals(keep func(transcript.Meta) bool, limit int) ([]session.Totals, []*session.FileError, error) {
	var out []session.Totals
	var skipped []*session.FileError
	ok, err := ix.read(func(db *sql.DB, st *state) error {
		rows, err := ix.rows(db, st, "", nil, newest, keep, limit)
		if err != nil {
			return err
		}
		out = make([]session.Totals, len(rows))
		for i := range rows {
			out[i] = rows[i].Totals
		}
		skipped = st.skipped
		return nil
	})
	if !ok && err == nil {
		return session.ScanTotals(ix.dir, keep, limit)
	}
	return out, skipped, err
}

// Summaries is session.Store.Summaries from the index.
func (ix *Index) Summaries(keep func(transcript.Meta) bool) ([]session.Summarized, []*session.FileError, error) {
	var out []session.Summarized
	var skipped []*session.FileError
	ok, err := ix.read(func(db *sql.DB, st *state) error {
		rows, err := ix.rows(db, st, "", nil, newest, keep, 0)
		if err != nil {
			return err
		}
		at := make(map[int64]int, len(rows))
		out = make([]session.Summarized, len(rows))
		for i := range rows {
			out[i].Info = rows[i].Info
			at[rows[i].sid] = i
		}
		rs, err := db.Query("SELECT sid, rec FROM sums ORDER BY sid, line")
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			var sid int64
			var b []byte
			if err := rs.Scan(&sid, &b); err != nil {
				return err
			}
			i, ok := at[sid]
			if !ok {
				continue
			}
			if rec, err := transcript.Decode(b); err == nil {
				if s, ok := rec.(*transcript.Summary); ok {
					out[i].Summaries = append(out[i].Summaries, s)
				}
			}
		}
		skipped = st.skipped
		return rs.Err()
	})
	if !ok && err == nil {
		return session.ScanSummaries(ix.dir, keep)
	}
	return out, skipped, err
}

// Children is session.Store.Children from the index.
func (ix *Index) Children(parent string) ([]session.Info, error) {
	var out []session.Info
	ok, err := ix.read(func(db *sql.DB, st *state) error {
		rows, err := ix.rows(db, st, "parent = ?", []any{parent}, "ts ASC, ns ASC, name ASC", nil, 0)
		if err != nil {
			return err
		}
		for _, r := range rows {
			// A rich header's parent is the decoded one's.
			if r.Meta.Parent != nil && r.Meta.Parent.Session == parent {
				out = append(out, r.Info)
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
	ix.mu.Lock()
	if ix.db != nil {
		ix.db.Close()
		ix.db = nil
	}
	ix.broken = false
	if err := func() error {
		db, err := ix.recreate()
		if err != nil {
			return err
		}
		ix.db = db
		return nil
	}(); err != nil {
		ix.mu.Unlock()
		return 0, fmt.Errorf("sessionindex: %w", err)
	}
	ix.mu.Unlock()
	st, _, err := ix.sync("")
	if err != nil {
		return 0, fmt.Errorf("sessionindex: %w", err)
	}
	if st == nil {
		return 0, fmt.Errorf("sessionindex: the index %s cannot be used", ix.path)
	}
	return len(st.names), nil
}
