package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// tailSize is how much of the end of a transcript readDirTotals reads at
// most looking for its last summary: enough for any summary line mecha
// writes, small enough that a session costs about the same whatever its
// size. It first reads tailFirst bytes, a page, which hold a summary line
// as mecha writes it (a few hundred bytes); only a longer last line makes
// it read the rest.
const (
	tailSize  = 64 << 10
	tailFirst = 4 << 10
)

var tailBufs = sync.Pool{New: func() any { b := make([]byte, tailSize); return &b }}

// Totals is a listed session with what its summaries add up to.
type Totals struct {
	Info
	// Turns is the sum of the turns of its summaries, Stop the stop
	// reason of the last one; Finished says it has at least one.
	Turns    int
	Stop     string
	Finished bool
	// Tail says the totals came from the last line alone.
	Tail bool
	// Err says why the file could not be read to its end; its totals are
	// then not to be trusted.
	Err error
}

// readDirTotals lists the sessions in dir whose header keep accepts (nil
// keeps all), newest first, with their turns and last stop reason, and
// with what list would not list in skipped. With limit above zero only
// the newest limit sessions kept are returned, and only theirs are read
// past the header.
//
// A session whose last line is a complete summary carrying session_turns
// costs a header read and one read of at most tailSize bytes at its end,
// whatever its size. Any other (no summary yet or ever, a run still
// writing, a torn or very long last line, a summary older than the field)
// is read whole as readDirSummaries reads it, so the totals are the same
// either way.
func readDirTotals(dir string, keep func(transcript.Meta) bool, limit int) (read []Totals, skippedFiles []*FileError, err error) {
	names, err := sessionNames(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	all := make([]Totals, len(names))
	paths := make([]string, len(names))
	state := make([]error, len(names)) // nil: listed
	Parallel(len(names), func(i int) {
		paths[i], all[i].Ref = filepath.Join(dir, names[i]), Ref{Dir: dir, ID: idOf(names[i])}
		state[i] = readTotals(&all[i], paths[i], keep, limit <= 0)
	})
	out := all[:0]
	for i := range all {
		switch {
		case state[i] == nil:
			out = append(out, all[i])
		case !errors.Is(state[i], errNotKept):
			skippedFiles = append(skippedFiles, skipped(paths[i], state[i]))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return newerFirst(out[i].Meta, out[j].Meta) })
	if limit > 0 {
		out = out[:min(limit, len(out))]
		Parallel(len(out), func(i int) { readTail(&out[i]) })
	}
	return out, skippedFiles, nil
}

// readTotals reads the header of one file, at path, and, when kept and
// withTail, its totals, on one descriptor. A non-nil error leaves the
// file unlisted.
func readTotals(t *Totals, path string, keep func(transcript.Meta) bool, withTail bool) error {
	fd, st, err := safeopen.OpenFD(path)
	if err != nil {
		return err
	}
	defer syscall.Close(fd)
	t.Meta, t.HeaderID, err = headerFD(fd, path)
	if err != nil {
		return err
	}
	if keep != nil && !keep(t.Meta) {
		return errNotKept
	}
	if withTail {
		totalsFD(t, path, fd, st.Size)
	}
	return nil
}

// readTail opens a listed file again for its totals.
func readTail(t *Totals) {
	path := t.Ref.Path()
	fd, st, err := safeopen.OpenFD(path)
	if err != nil {
		t.Err = fmt.Errorf("session: %w", err)
		return
	}
	defer syscall.Close(fd)
	totalsFD(t, path, fd, st.Size)
}

// totalsFD fills in t's totals from the file's last line when it can, and
// otherwise from a full scan from the start.
func totalsFD(t *Totals, path string, fd int, size int64) {
	bp := tailBufs.Get().(*[]byte)
	defer tailBufs.Put(bp)
	if sum, err := tailSummary(fd, size, *bp); err != nil {
		t.Err = err
		return
	} else if sum != nil {
		t.Turns, t.Stop, t.Finished, t.Tail = *sum.SessionTurns, sum.StopReason, true, true
		return
	}
	sbp := summaryBufs.Get().(*[]byte)
	defer summaryBufs.Put(sbp)
	if _, err := syscall.Seek(fd, 0, 0); err != nil {
		t.Err = fmt.Errorf("session: %w", &os.PathError{Op: "seek", Path: path, Err: err})
		return
	}
	_, _, sums, err := readSummaries(&fdReader{fd, path, size}, *sbp, path, nil)
	t.Err = err
	t.Turns, t.Stop, t.Finished = sumTotals(sums)
}

// sumTotals is what summaries add up to: turns summed (saturating), the
// last stop reason, and whether there is any.
func sumTotals(sums []*transcript.Summary) (turns int, stop string, finished bool) {
	for _, s := range sums {
		turns = transcript.AddTurns(turns, s.Turns)
		stop = s.StopReason
	}
	return turns, stop, len(sums) > 0
}

// tailSummary reads the end of a file of size bytes with pread (its last
// page, then, when the last line is longer, its last len(buf) bytes, or
// all of it when shorter) and returns its last line when that is a
// complete summary record carrying session_turns. It returns nil
// when the answer needs the whole file: the file does not end with a
// newline (a torn or growing last line), the last line starts before the
// bytes read, or it is anything else.
func tailSummary(fd int, size int64, buf []byte) (*transcript.Summary, error) {
	line, err := lastLine(fd, size, buf[:min(tailFirst, len(buf))])
	if err == nil && line == nil && size > tailFirst && len(buf) > tailFirst {
		line, err = lastLine(fd, size, buf)
	}
	if line == nil || err != nil {
		return nil, err
	}
	if summary, known := canonicalKind(line); !summary || !known {
		return nil, nil
	}
	rec, err := transcript.Decode(line)
	if err != nil {
		return nil, nil
	}
	if s, ok := rec.(*transcript.Summary); ok && s.SessionTurns != nil {
		return s, nil
	}
	return nil, nil
}

// lastLine reads the last len(buf) bytes of a file of size bytes (or all
// of it) and returns its last line without the newline, or nil when the
// file does not end with one or the line starts before the bytes read.
func lastLine(fd int, size int64, buf []byte) ([]byte, error) {
	if size <= 0 {
		return nil, nil
	}
	n := int(min(size, int64(len(buf))))
	buf = buf[:n]
	if err := preadFull(fd, buf, size-int64(n)); errors.Is(err, errShrunk) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	if buf[n-1] != '\n' {
		return nil, nil
	}
	i := bytes.LastIndexByte(buf[:n-1], '\n')
	if i < 0 {
		return nil, nil // the whole tail is one line: the header, or longer
	}
	return buf[i+1 : n-1], nil
}

// errShrunk is a file that became shorter than fstat said while it was read.
var errShrunk = errors.New("file shrank while read")

// preadFull fills p from offset off, retrying short reads and EINTR.
func preadFull(fd int, p []byte, off int64) error {
	for len(p) > 0 {
		m, err := syscall.Pread(fd, p, off)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fmt.Errorf("session: pread: %w", err)
		}
		if m == 0 {
			return fmt.Errorf("session: pread: %w", errShrunk)
		}
		p, off = p[m:], off+int64(m)
	}
	return nil
}
