package session

import (
	"errors"
	"fmt"
	"io"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Skips is what a read of a transcript could not parse, or did not take
// as it was written.
type Skips struct {
	// Count is how many lines did not parse or were oversized.
	Count int
	// Lines describes the first few of them (at most 20).
	Lines []SkippedLine
	// HeaderID is the id the header claimed when it was not the file's
	// (see Identify); the header was handed on with the file's id.
	HeaderID string
}

func (s *Skips) add(line int, torn, oversized bool, err error) {
	s.Count++
	if len(s.Lines) < maxSkippedDetail {
		s.Lines = append(s.Lines, SkippedLine{Line: line, Torn: torn, Oversized: oversized, Err: err.Error()})
	}
}

// errOversized is why a line longer than transcript.MaxLine was skipped.
var errOversized = fmt.Errorf("line longer than %d bytes", transcript.MaxLine)

// Scan reads the transcript at path one line at a time, without holding
// the file in memory, and calls fn with each record that parses and the
// 1-based number of its line: the header first (line 1, a *transcript.Meta),
// then every later record in file order, including records of kinds this
// build does not know. The records are fn's to keep.
//
// Lines that do not parse (a torn final line is the normal trace of a
// killed process; a second header is not a record) and lines longer than
// transcript.MaxLine, which are read past and never held, are skipped and
// reported in the returned Skips, as Load reports them; blank lines are
// ignored. A file whose first line is not a meta record, or is longer than
// transcript.MaxHeader, is ErrNotSession; a file that is not a regular
// file is not read (safeopen.ErrNotRegular). The header's id is the file's
// (Identify); one it claimed otherwise is reported in Skips.HeaderID. An
// error returned by fn stops the scan and is returned as it is.
func Scan(path string, fn func(line int, rec transcript.Record) error) (Skips, error) {
	f, err := safeopen.Open(path)
	if err != nil {
		return Skips{}, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	sk, err := scan(f, path, fn)
	var ce callerError
	if errors.As(err, &ce) {
		return sk, ce.err
	}
	if err != nil {
		return sk, err
	}
	return sk, nil
}

// callerError carries an error returned by Scan's fn past the wrapping of
// Scan's own errors.
type callerError struct{ err error }

func (e callerError) Error() string { return e.err.Error() }

// scan reads a transcript from r; path, when not "", names it in errors
// and gives the header its id.
func scan(r io.Reader, path string, fn func(line int, rec transcript.Record) error) (Skips, error) {
	var sk Skips
	lr := newLineReader(r, 256<<10)
	first, oversized, err := lr.next(maxHeader)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return sk, notSession(path, "")
		}
		return sk, fmt.Errorf("session: read %s: %w", path, err)
	}
	if oversized {
		return sk, headerTooLong(path)
	}
	head, err := transcript.Decode(first)
	if err != nil {
		return sk, notSession(path, "")
	}
	meta, ok := head.(*transcript.Meta)
	if !ok {
		return sk, notSession(path, "")
	}
	if path != "" {
		sk.HeaderID = Identify(path, meta)
	}
	if err := fn(lr.n, head); err != nil {
		return sk, callerError{err}
	}
	for {
		line, oversized, err := lr.next(transcript.MaxLine)
		if errors.Is(err, io.EOF) {
			return sk, nil
		}
		if err == nil && oversized {
			n := lr.n
			if err = lr.skipRest(); err == nil {
				sk.add(n, lr.torn, true, errOversized)
				continue
			}
		}
		if err != nil {
			return sk, fmt.Errorf("session: read %s line %d: %w", path, lr.n, err)
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
			sk.add(lr.n, lr.torn, false, err)
			continue
		}
		if err := fn(lr.n, rec); err != nil {
			return sk, callerError{err}
		}
	}
}
