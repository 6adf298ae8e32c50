package session

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mecha-agent/mecha/transcript"
)

// Skips is what a read of a transcript could not parse.
type Skips struct {
	// Count is how many lines did not parse.
	Count int
	// Lines describes the first few of them (at most 20).
	Lines []SkippedLine
}

func (s *Skips) add(line int, torn bool, err error) {
	s.Count++
	if len(s.Lines) < maxSkippedDetail {
		s.Lines = append(s.Lines, SkippedLine{Line: line, Torn: torn, Err: err.Error()})
	}
}

// Scan reads the transcript at path one line at a time, without holding
// the file in memory, and calls fn with each record that parses and the
// 1-based number of its line: the header first (line 1, a *transcript.Meta),
// then every later record in file order, including records of kinds this
// build does not know. The records are fn's to keep.
//
// Lines that do not parse (a torn final line is the normal trace of a
// killed process; a second header is not a record) are skipped and
// reported in the returned Skips, as Load reports them; blank lines are
// ignored. A file whose first line is not a meta record is ErrNotSession.
// An error returned by fn stops the scan and is returned as it is.
func Scan(path string, fn func(line int, rec transcript.Record) error) (Skips, error) {
	f, err := os.Open(path)
	if err != nil {
		return Skips{}, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	sk, err := scan(f, fn)
	var ce callerError
	if errors.As(err, &ce) {
		return sk, ce.err
	}
	if err != nil {
		return sk, fmt.Errorf("%w: %s", err, path)
	}
	return sk, nil
}

// callerError carries an error returned by Scan's fn past the wrapping of
// Scan's own errors.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }

func scan(r io.Reader, fn func(line int, rec transcript.Record) error) (Skips, error) {
	var sk Skips
	lr := newLineReader(r, 256<<10)
	first, _, err := lr.next(nil)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return sk, ErrNotSession
		}
		return sk, fmt.Errorf("session: read: %w", err)
	}
	head, err := transcript.Decode(first)
	if err != nil {
		return sk, ErrNotSession
	}
	if _, ok := head.(*transcript.Meta); !ok {
		return sk, ErrNotSession
	}
	if err := fn(lr.n, head); err != nil {
		return sk, callerError{err}
	}
	for {
		line, _, err := lr.next(nil)
		if errors.Is(err, io.EOF) {
			return sk, nil
		}
		if err != nil {
			return sk, fmt.Errorf("session: read line %d: %w", lr.n, err)
		}
		if isBlank(line) {
			continue
		}
		rec, err := transcript.Decode(line)
		if err == nil {
			if _, dup := rec.(*transcript.Meta); dup {
				err = errors.New("a second meta record")
			}
		}
		if err != nil {
			sk.add(lr.n, lr.torn, err)
			continue
		}
		if err := fn(lr.n, rec); err != nil {
			return sk, callerError{err}
		}
	}
}
