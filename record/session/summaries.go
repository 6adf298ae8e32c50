package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
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
// Load skips it. A file that is not a regular file is not read, a header
// longer than transcript.MaxHeader is not a session's, and a line longer
// than transcript.MaxLine is skipped.
func ReadSummaries(path string) (transcript.Meta, []*transcript.Summary, error) {
	fd, st, err := safeopen.OpenFD(path)
	if err != nil {
		return transcript.Meta{}, nil, fmt.Errorf("session: %w", err)
	}
	defer syscall.Close(fd)
	bp := summaryBufs.Get().(*[]byte)
	defer summaryBufs.Put(bp)
	meta, _, sums, err := readSummaries(&fdReader{fd, path, st.Size}, *bp, path, nil)
	return meta, sums, err
}

// Summarized is a session's header and summary records.
type Summarized struct {
	Info
	Summaries []*transcript.Summary
	// Err says why the file could not be read to its end; its summaries
	// are then not to be trusted.
	Err error
}

// readDirSummaries reads the header and summaries of every session in dir
// whose header keep accepts (nil keeps all), newest first as list orders
// them, with what ReadSummaries does to each file but in one pass: one
// open, one fstat and a few large reads per file, the header coming from
// the first read. What list would not list is left out: files that are
// not sessions, cannot be opened or are not regular files, and headers
// longer than 64 KiB; they come back in skipped, as list's NotSessions
// do. A missing directory has no sessions.
func readDirSummaries(dir string, keep func(transcript.Meta) bool) (read []Summarized, skippedFiles []*FileError, err error) {
	names, err := sessionNames(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	all := make([]Summarized, len(names))
	paths := make([]string, len(names))
	listed := make([]bool, len(names))
	errs := make([]error, len(names))
	Parallel(len(names), func(i int) {
		s := &all[i]
		path := filepath.Join(dir, names[i])
		paths[i], s.Ref = path, Ref{Dir: dir, ID: idOf(names[i])}
		fd, st, err := safeopen.OpenFD(path)
		if err != nil {
			errs[i] = err
			return
		}
		defer syscall.Close(fd)
		bp := summaryBufs.Get().(*[]byte)
		defer summaryBufs.Put(bp)
		s.Meta, s.HeaderID, s.Summaries, s.Err = readSummaries(&fdReader{fd, path, st.Size}, *bp, path, keep)
		switch {
		case errors.Is(s.Err, errNotKept):
		case errors.Is(s.Err, ErrNotSession), errors.Is(s.Err, errHeader):
			errs[i] = s.Err
		default:
			listed[i] = true
		}
	})
	out := all[:0]
	for i := range all {
		if listed[i] {
			out = append(out, all[i])
		} else if errs[i] != nil {
			skippedFiles = append(skippedFiles, skipped(paths[i], errs[i]))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return newerFirst(out[i].Meta, out[j].Meta) })
	return out, skippedFiles, nil
}

var (
	errNotKept = errors.New("session: not kept")
	// errHeader is a failure to read a file's first line, which a listing
	// counts as not a session.
	errHeader = errors.New("session: cannot read the header")
)

// fdReader reads a file descriptor with plain system calls, its errors
// worded as os.File's. When fstat gave the file a size, the read that
// reaches it reports the end of the file too, which saves a read(2) that
// would return nothing; a file that grows meanwhile is read as it was at
// fstat, its last line possibly torn, as at any other moment.
type fdReader struct {
	fd   int
	path string
	left int64 // bytes to the size fstat gave; none known when it gave 0
}

func (r *fdReader) Read(p []byte) (int, error) {
	n, err := readSome(r.fd, p)
	if err != nil {
		return n, &os.PathError{Op: "read", Path: r.path, Err: err}
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	if r.left > 0 {
		if r.left -= int64(n); r.left <= 0 {
			return n, io.EOF
		}
	}
	return n, nil
}

// readSummaries is ReadSummaries over any reader, scanning with buf (of
// any length above zero). A first line longer than maxHeader is not a
// session's header, and is not read past its first buffer; a later line
// longer than transcript.MaxLine is skipped. When keep (nil: keep all)
// refuses the header, reading stops with errNotKept.
// The header's id is the file's; the one it claimed otherwise comes back
// as claimed.
func readSummaries(r io.Reader, buf []byte, path string, keep func(transcript.Meta) bool) (meta transcript.Meta, claimed string, sums []*transcript.Summary, err error) {
	s := &chunkScanner{r: r, buf: buf}
	first, tooLong, err := s.next(func(start []byte) bool { return len(start) <= maxHeader })
	if err != nil {
		if errors.Is(err, io.EOF) {
			return transcript.Meta{}, "", nil, notSession(path, "")
		}
		return transcript.Meta{}, "", nil, fmt.Errorf("%w: %w", errHeader, err)
	}
	if tooLong || len(first) > maxHeader {
		return transcript.Meta{}, "", nil, headerTooLong(path)
	}
	meta, claimed, err = decodeHeader(first, path)
	if err != nil {
		return meta, "", nil, err
	}
	s.max = transcript.MaxLine
	if keep != nil && !keep(meta) {
		return meta, claimed, nil, errNotKept
	}
	for {
		line, skipped, err := s.next(maybeSummaryStart)
		if errors.Is(err, io.EOF) {
			return meta, claimed, sums, nil
		}
		if err != nil {
			return meta, claimed, sums, fmt.Errorf("session: read %s line %d: %w", path, s.n, err)
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
