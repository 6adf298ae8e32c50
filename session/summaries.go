package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"

	"github.com/mecha-agent/mecha/transcript"
)

// summaryBufSize is the size of the buffers ReadSummaries reads with: one
// read(2) takes in a small transcript whole, most lines fit (a longer one
// still works), and the buffer stays in a core's cache while it is scanned.
const summaryBufSize = 256 << 10

// summaryBufs lends read buffers to ReadSummaries, so that reading ten
// thousand transcripts on a few workers allocates a few buffers, not ten
// thousand.
var summaryBufs = sync.Pool{New: func() any { b := make([]byte, summaryBufSize); return &b }}

var (
	summaryNeedle = []byte(`"summary"`)
	escapeNeedle  = []byte(`\u`)
)

// ReadSummaries returns a transcript's header and its summary records
// without decoding anything else. It reads the file in large chunks into a
// reused buffer, finds line ends with one bytes.IndexByte per line, and
// looks only at the start of each line: lines in the canonical layout name
// their kind first, so every line but a summary is passed over without
// being copied or decoded. A line with no newline at the end of the file
// (torn) is decoded like any other, and skipped if it does not parse, as
// Load skips it. A file that is not a regular file is not read.
func ReadSummaries(path string) (transcript.Meta, []*transcript.Summary, error) {
	fd, err := openRead(path)
	if err != nil {
		return transcript.Meta{}, nil, fmt.Errorf("session: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return transcript.Meta{}, nil, fmt.Errorf("session: %w", &os.PathError{Op: "stat", Path: path, Err: err})
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return transcript.Meta{}, nil, fmt.Errorf("session: %w", &os.PathError{Op: "read", Path: path, Err: errNotRegular})
	}
	bp := summaryBufs.Get().(*[]byte)
	defer summaryBufs.Put(bp)
	return readSummaries(fdReader{fd, path}, *bp, path)
}

var errNotRegular = errors.New("not a regular file")

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		if err := syscall.Fstat(fd, st); err != syscall.EINTR {
			return err
		}
	}
}

// fdReader reads a file descriptor with plain system calls, its errors
// worded as os.File's.
type fdReader struct {
	fd   int
	path string
}

func (r fdReader) Read(p []byte) (int, error) {
	n, err := readSome(r.fd, p)
	if err != nil {
		return n, &os.PathError{Op: "read", Path: r.path, Err: err}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// readSummaries is ReadSummaries over any reader, scanning with buf (of
// any length above zero).
func readSummaries(r io.Reader, buf []byte, path string) (transcript.Meta, []*transcript.Summary, error) {
	s := &chunkScanner{r: r, buf: buf}
	first, _, err := s.next(nil)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return transcript.Meta{}, nil, fmt.Errorf("%w: %s", ErrNotSession, path)
		}
		return transcript.Meta{}, nil, fmt.Errorf("session: %w", err)
	}
	meta, err := decodeMeta(first, path)
	if err != nil {
		return meta, nil, err
	}
	var sums []*transcript.Summary
	for {
		line, skipped, err := s.next(maybeSummaryStart)
		if errors.Is(err, io.EOF) {
			return meta, sums, nil
		}
		if err != nil {
			return meta, sums, fmt.Errorf("session: read %s line %d: %w", path, s.n, err)
		}
		if skipped || !mayBeSummary(line) {
			continue
		}
		if rec, err := transcript.Decode(line); err == nil {
			if s, ok := rec.(*transcript.Summary); ok {
				sums = append(sums, s)
			}
		}
	}
}

var recordPrefix = []byte(`{"record":"`)

// canonicalKind reports whether the start of a line names its record kind
// first, as mecha writes every line, and if so whether that kind is
// summary. It is transcript.PeekKind without allocating the kind: when it
// says known, Decode picks the same kind.
func canonicalKind(start []byte) (summary, known bool) {
	start = bytes.TrimLeft(start, " \t")
	if !bytes.HasPrefix(start, recordPrefix) {
		return false, false
	}
	rest := start[len(recordPrefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return false, false
	}
	return string(rest[:end]) == transcript.KindSummary, true
}

// maybeSummaryStart reports whether a line that starts with start (and
// goes on past the scanner's buffer) is wanted whole: unless its start
// already says it is some other kind, it may be a summary.
func maybeSummaryStart(start []byte) bool {
	summary, known := canonicalKind(start)
	return summary || !known
}

// mayBeSummary reports whether a whole line could decode as a summary
// record. A line in another layout needs decoding only if "summary" is in
// it, literally or with a letter behind a \u escape.
func mayBeSummary(line []byte) bool {
	if summary, known := canonicalKind(line); known {
		return summary
	}
	return bytes.Contains(line, summaryNeedle) || bytes.Contains(line, escapeNeedle)
}

// chunkScanner yields the lines of a reader through one buffer: reads fill
// it whole, lines that fit are returned in place, the unfinished line at
// the end moves to the front before the next read, and a line longer than
// the buffer is either skipped as it streams past or gathered in long.
type chunkScanner struct {
	r    io.Reader
	buf  []byte
	p, e int    // buf[p:e] is read and not yet returned
	eof  bool   // r has nothing more
	long []byte // a line longer than buf, gathered
	n    int    // number of the line last returned, 1-based
}

// next returns the next line without its newline; io.EOF after the last.
// keep, when non-nil, sees the start of a line longer than the buffer and
// says whether the whole line is wanted; when it says no, the line is read
// past and returned as nil with skipped=true. The line is valid until the
// next call.
func (s *chunkScanner) next(keep func(start []byte) bool) (line []byte, skipped bool, err error) {
	from := s.p // buf[s.p:from] is known to hold no newline
	for {
		if i := bytes.IndexByte(s.buf[from:s.e], '\n'); i >= 0 {
			line = s.buf[s.p : from+i]
			s.p = from + i + 1
			s.n++
			return line, false, nil
		}
		if s.eof {
			if s.p == s.e {
				return nil, false, io.EOF
			}
			line = s.buf[s.p:s.e]
			s.p = s.e
			s.n++
			return line, false, nil
		}
		if s.p == 0 && s.e == len(s.buf) {
			return s.longLine(keep)
		}
		seen := s.e - s.p
		if err := s.fill(); err != nil {
			return nil, false, err
		}
		from = s.p + seen
	}
}

// fill moves the unreturned bytes to the front of the buffer and reads
// after them until it has at least one more byte or r is exhausted.
func (s *chunkScanner) fill() error {
	if s.p > 0 {
		s.e = copy(s.buf, s.buf[s.p:s.e])
		s.p = 0
	}
	for !s.eof && s.e < len(s.buf) {
		m, err := s.r.Read(s.buf[s.e:])
		s.e += m
		if errors.Is(err, io.EOF) {
			s.eof = true
		} else if err != nil {
			return err
		}
		if m > 0 {
			return nil
		}
	}
	return nil
}

// longLine handles a line that starts with the whole buffer.
func (s *chunkScanner) longLine(keep func(start []byte) bool) (line []byte, skipped bool, err error) {
	s.n++
	want := keep == nil || keep(s.buf)
	if want {
		s.long = append(s.long[:0], s.buf...)
	}
	for {
		s.p, s.e = 0, 0
		if err := s.fill(); err != nil {
			return nil, !want, err
		}
		i := bytes.IndexByte(s.buf[:s.e], '\n')
		if i < 0 {
			i = s.e
		}
		if want {
			s.long = append(s.long, s.buf[:i]...)
		}
		if i < s.e || s.eof {
			s.p = min(i+1, s.e)
			if !want {
				return nil, true, nil
			}
			return s.long, false, nil
		}
	}
}
