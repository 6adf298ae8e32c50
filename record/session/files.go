package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// FileID returns the id of the session file at path: its name without the
// extension. The file name is the id; a header that claims another is
// overruled (see Identify).
func FileID(path string) string {
	return strings.TrimSuffix(filepath.Base(path), Ext)
}

// Identify gives a header read from the file at path the file's id, and
// returns the id the header claimed when it was another ("" when it
// agreed). Readers call it on every header they hand out, so that a header
// that claims another session's id (or one like ../../x) is never shown,
// listed or resumed as that id.
func Identify(path string, m *transcript.Meta) (claimed string) {
	id := FileID(path)
	if m.ID == id {
		return ""
	}
	claimed, m.ID = m.ID, id
	return claimed
}

// ForeignIDNote says, on one line, that the header of the file at path
// claimed the id claimed. The claimed id is quoted only when it has the
// shape of an id, so that a hostile one is never printed as if it were.
func ForeignIDNote(path, claimed string) string {
	what := "an id that is not a session id"
	if ValidID(claimed) {
		what = "the id " + claimed
	}
	return fmt.Sprintf("%s: its header claims %s; shown as %s", path, what, FileID(path))
}

// NotSessionError is a file whose first line is not a session's header.
// It matches ErrNotSession.
type NotSessionError struct {
	Path string
	Why  string // what was wrong with the first line ("" when it is not a meta record)
}

func (e *NotSessionError) Error() string {
	if e.Why == "" {
		return fmt.Sprintf("%s: %s", ErrNotSession, e.Path)
	}
	return fmt.Sprintf("%s: %s: %s", ErrNotSession, e.Why, e.Path)
}

func (e *NotSessionError) Is(target error) bool { return target == ErrNotSession }

func notSession(path, why string) error { return &NotSessionError{Path: path, Why: why} }

func headerTooLong(path string) error {
	return notSession(path, fmt.Sprintf("header longer than %d bytes", maxHeader))
}

// FileError is a .jsonl file of the store that a listing passed over, and
// why: it is not a regular file, not a session, or could not be read.
type FileError struct {
	Path string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %s", e.Path, e.Reason()) }
func (e *FileError) Unwrap() error { return e.Err }

// Reason says in a few words why the file was passed over.
func (e *FileError) Reason() string {
	var ns *NotSessionError
	if errors.As(e.Err, &ns) {
		if ns.Why == "" {
			return "not a mecha session (its first line is not a meta record)"
		}
		return "not a mecha session (" + ns.Why + ")"
	}
	var pe *os.PathError
	if errors.As(e.Err, &pe) {
		if errors.Is(pe.Err, safeopen.ErrNotRegular) {
			return pe.Err.Error()
		}
		return pe.Op + ": " + pe.Err.Error()
	}
	return e.Err.Error()
}

func skipped(path string, err error) *FileError { return &FileError{Path: path, Err: err} }
