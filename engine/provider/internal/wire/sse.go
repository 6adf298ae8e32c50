package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// ErrTruncated is returned when a stream ends in the middle of a line. It
// is an io.EOF too: errors.Is(ErrTruncated, io.EOF) holds.
var ErrTruncated = fmt.Errorf("wire: stream ended in the middle of a line: %w", io.EOF)

// Event is one server-sent event.
type Event struct {
	// Name is the value of the event: field, "" when the event has none.
	Name string
	// Data is the values of the data: fields joined by "\n", nil when no
	// data field had a value.
	Data []byte
}

// Reader reads a text/event-stream, by event (Next) or by data line
// (NextData); a stream is read one way or the other, not both.
type Reader struct {
	br *bufio.Reader
}

// NewReader returns a Reader of r.
func NewReader(r io.Reader) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10)}
}

// line reads one line with its line end. At the end of the stream, the
// error is io.EOF when nothing was left to read, ErrTruncated when a line
// without its newline was; any other error is the underlying reader's.
func (r *Reader) line() ([]byte, error) {
	line, err := r.br.ReadBytes('\n')
	if err != nil && len(line) > 0 && errors.Is(err, io.EOF) {
		err = ErrTruncated
	}
	return line, err
}

// field splits a line without its line end at its first colon: "data: x"
// is field "data" and value "x" (one space after the colon is dropped),
// ": note" is a comment (field ""), and "data" alone a field without value.
func field(line []byte) (string, []byte) {
	name, value, _ := bytes.Cut(line, []byte(":"))
	return string(name), bytes.TrimPrefix(value, []byte(" "))
}

// Next reads one event: the event: and data: fields up to the blank line
// that ends it. Blank lines before any field, comments and other fields
// (id:, retry:) are skipped; lines may end in LF or CR LF. An event cut
// short by the end of the stream is discarded, as the SSE specification
// says, and io.EOF (or ErrTruncated, mid-line) returned; a read error is
// returned as it is.
func (r *Reader) Next() (Event, error) {
	var ev Event
	seen := false
	for {
		line, err := r.line()
		if err != nil {
			return Event{}, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			if seen {
				return ev, nil
			}
			continue
		}
		name, value := field(line)
		switch name {
		case "event":
			ev.Name, seen = string(value), true
		case "data":
			if ev.Data != nil {
				ev.Data = append(ev.Data, '\n')
			}
			ev.Data, seen = append(ev.Data, value...), true
		}
	}
}

// NextData reads up to the next data: line and returns its value trimmed
// of white space, for streams whose every data line is a message by itself
// (Chat Completions servers send one JSON chunk per line). A line is
// trimmed of white space before it is split at its colon. Other lines
// (event:, id:, comments, blank lines) are skipped.
//
// At the end of the stream or on a read error, NextData returns the error
// together with the value of the last line read if it was a data line
// without its newline, and nil otherwise. The error is io.EOF when the
// stream ended at the end of a line, ErrTruncated when it ended within one.
func (r *Reader) NextData() ([]byte, error) {
	for {
		line, err := r.line()
		name, value := field(bytes.TrimSpace(line))
		if name != "data" {
			if err != nil {
				return nil, err
			}
			continue
		}
		return bytes.TrimSpace(value), err
	}
}
