package session

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader yields the lines of a transcript without copying lines that
// fit its buffer, and without ever holding more than a given length of one
// line: what goes past it is left unread until the caller skips it.
type lineReader struct {
	br   *bufio.Reader
	long []byte // scratch for lines longer than the buffer, reused
	n    int    // number of the line last returned, 1-based
	// torn is set when the last line returned had no terminating newline.
	torn bool
	// rest is set when next left the rest of an oversized line unread.
	rest bool
}

func newLineReader(r io.Reader, size int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, size)}
}

// next returns the next line without its newline. A line longer than max
// bytes is not returned: next reports it as oversized, having read a
// little more than max bytes of it, and the caller either stops there or
// calls skipRest to read past the rest of it. The returned slice is valid
// until the next call.
func (lr *lineReader) next(max int) (line []byte, oversized bool, err error) {
	chunk, err := lr.br.ReadSlice('\n')
	if err == nil {
		lr.n++
		lr.torn = false
		if len(chunk)-1 > max {
			return nil, true, nil
		}
		return chunk[:len(chunk)-1], false, nil
	}
	if errors.Is(err, io.EOF) {
		if len(chunk) == 0 {
			return nil, false, io.EOF
		}
		lr.n++
		lr.torn = true
		if len(chunk) > max {
			return nil, true, nil
		}
		return chunk, false, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, false, err
	}
	lr.n++
	lr.long = append(lr.long[:0], chunk...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(lr.long) > max {
			lr.torn, lr.rest = false, true
			return nil, true, nil
		}
		chunk, err = lr.br.ReadSlice('\n')
		lr.long = append(lr.long, chunk...)
	}
	switch {
	case err == nil:
		lr.torn = false
		if len(lr.long)-1 > max {
			return nil, true, nil
		}
		return lr.long[:len(lr.long)-1], false, nil
	case errors.Is(err, io.EOF):
		lr.torn = true
		if len(lr.long) > max {
			return nil, true, nil
		}
		return lr.long, false, nil
	}
	return nil, false, err
}

// skipRest reads past the rest of an oversized line, to its newline or the
// end of the file, and says whether it was torn (ended without a newline).
func (lr *lineReader) skipRest() error {
	if cap(lr.long) > 1<<20 {
		lr.long = nil // do not keep an oversized line's worth
	}
	if !lr.rest {
		return nil
	}
	lr.rest = false
	for {
		_, err := lr.br.ReadSlice('\n')
		switch {
		case err == nil:
			return nil
		case errors.Is(err, io.EOF):
			lr.torn = true
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return err
		}
	}
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
	skip bool   // the rest of a refused long line is still to be read past
	// max bounds a gathered line (0: no bound); a longer one is returned
	// as skipped, as if keep had refused it.
	max int
}

// next returns the next line without its newline; io.EOF after the last.
// keep, when non-nil, sees the start of a line longer than the buffer and
// says whether the whole line is wanted; when it says no, the line is
// returned as nil with skipped=true, and the next call reads past the rest
// of it, so a caller that stops there reads no further. The line is valid
// until the next call.
func (s *chunkScanner) next(keep func(start []byte) bool) (line []byte, skipped bool, err error) {
	if s.skip {
		if err := s.skipRest(); err != nil {
			return nil, false, err
		}
	}
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
	if keep != nil && !keep(s.buf) {
		s.p, s.skip = s.e, true
		return nil, true, nil
	}
	s.long = append(s.long[:0], s.buf...)
	for {
		if s.max > 0 && len(s.long) > s.max {
			s.long = nil // do not keep an oversized line's worth
			s.p, s.e, s.skip = 0, 0, true
			return nil, true, nil
		}
		s.p, s.e = 0, 0
		if err := s.fill(); err != nil {
			return nil, false, err
		}
		i := bytes.IndexByte(s.buf[:s.e], '\n')
		if i < 0 {
			s.long = append(s.long, s.buf[:s.e]...)
			if s.eof {
				s.p = s.e
				return s.oversized()
			}
			continue
		}
		s.long = append(s.long, s.buf[:i]...)
		s.p = i + 1
		return s.oversized()
	}
}

// oversized returns the gathered line, or skips it when it is longer than
// max.
func (s *chunkScanner) oversized() ([]byte, bool, error) {
	if s.max > 0 && len(s.long) > s.max {
		s.long = nil
		return nil, true, nil
	}
	return s.long, false, nil
}

// skipRest reads past the rest of a refused long line, to its newline.
func (s *chunkScanner) skipRest() error {
	s.skip = false
	for !s.eof {
		s.p, s.e = 0, 0
		if err := s.fill(); err != nil {
			return err
		}
		if i := bytes.IndexByte(s.buf[:s.e], '\n'); i >= 0 {
			s.p = i + 1
			return nil
		}
		s.p = s.e
	}
	return nil
}
