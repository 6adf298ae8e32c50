package session

import "github.com/mecha-agent/mecha/record/transcript"

// Lazy records into a Writer it opens only when the first record arrives,
// so that a run refused before it records anything leaves no session file
// behind, and adds no empty attach to a session it resumes.
type Lazy struct {
	// Open opens the writer, given the first record to be appended. What
	// Open appends itself (a config record, say) comes before that record.
	Open func(first transcript.Record) (*Writer, error)

	w   *Writer
	err error // Open's failure, returned by every later call
}

// Append appends records, opening the writer on the first of them.
func (l *Lazy) Append(recs ...transcript.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if l.w == nil {
		if l.err != nil {
			return l.err
		}
		w, err := l.Open(recs[0])
		if err != nil {
			l.err = err
			return err
		}
		l.w = w
	}
	return l.w.Append(recs...)
}

// Sync syncs the writer, when there is one.
func (l *Lazy) Sync() error {
	if l.w == nil {
		return l.err
	}
	return l.w.Sync()
}

// Writer is the writer, nil until a record was appended.
func (l *Lazy) Writer() *Writer { return l.w }

// Close closes the writer, when there is one. Closing twice is harmless.
func (l *Lazy) Close() error {
	if l.w == nil {
		return l.err
	}
	return l.w.Close()
}
