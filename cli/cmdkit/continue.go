package cmdkit

import (
	"fmt"

	"github.com/mecha-agent/mecha/internal/workdir"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ContinueID returns the session "--continue" resumes: the
// newest session whose workspace is dir (both compared absolute, cleaned
// and with symbolic links resolved) and that a person started as a run of
// their own. Replays, reruns, reflections and distillations, imports,
// MCP server and proxy sessions and subagents' child runs are passed
// over: continuing one of them is never what "carry on here" means. Only
// headers are read. No such session is an error wrapping
// session.ErrNotFound that names the workspace.
func (e *Env) ContinueID(dir string) (session.Ref, error) {
	want, err := workdir.Dir(dir)
	if err != nil {
		return session.Ref{}, err
	}
	want = workdir.Canonical(want)
	store, err := e.Store()
	if err != nil {
		return session.Ref{}, err
	}
	l, err := store.List()
	if err != nil {
		return session.Ref{}, err
	}
	e.NoteSkipped(l.NotSessions)
	seen := map[string]string{} // a header's workspace -> its canonical form
	for _, s := range l.Sessions {
		if !Continuable(s.Meta) {
			continue
		}
		c, ok := seen[s.Meta.Workspace]
		if !ok {
			c = workdir.Canonical(s.Meta.Workspace)
			seen[s.Meta.Workspace] = c
		}
		if c == want {
			return s.Ref, nil
		}
	}
	return session.Ref{}, fmt.Errorf("%w: no session to continue in the workspace %s (mecha sessions list shows them all)", session.ErrNotFound, want)
}

// Continuable reports whether a session is one "--continue" may pick: a
// run a person started, not one that redoes, reads, serves or answers
// another.
func Continuable(m transcript.Meta) bool {
	return session.Kind(&m) == session.KindRun && m.Parent == nil
}
