package cmdkit

import (
	"fmt"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
)

// maxNotes bounds how many skipped files are named one by one.
const maxNotes = 10

// NoteSkipped writes to Err one note per .jsonl file of the store that a
// listing passed over, naming it and saying why (not a regular file, not a
// session, unreadable): the first ten, then how many more.
func (e *Env) NoteSkipped(files []*session.FileError) {
	if e.Err == nil {
		return
	}
	for i, f := range files {
		if i == maxNotes {
			n := len(files) - maxNotes
			fmt.Fprintf(e.Err, "note: and %d more .jsonl %s that %s not mecha sessions\n", n, textfmt.Plural(n, "file", "files"), textfmt.Plural(n, "is", "are"))
			return
		}
		fmt.Fprintf(e.Err, "note: skipped %s: %s\n", f.Path, textfmt.OneLine(f.Reason()))
	}
}

// NoteForeignID writes to Err that the header of the session s claimed
// another id (claimed; nothing when it is ""): the file name is the id it
// is shown and resumed under.
func (e *Env) NoteForeignID(s session.Ref, claimed string) {
	if e.Err == nil || claimed == "" {
		return
	}
	fmt.Fprintf(e.Err, "note: %s\n", textfmt.OneLine(session.ForeignIDNote(s.Path(), claimed)))
}
