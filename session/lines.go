package session

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader yields the lines of a transcript without a length limit and
// without copying lines that fit its buffer. A caller that only cares about
// some lines can skip the rest of a long line after seeing its start.
type lineReader struct {
	br   *bufio.Reader
	long []byte // scratch for lines longer than the buffer, reused
	n    int    // number of the line last returned, 1-based
	// torn is set when the last line returned had no terminating newline.
	torn bool
}

func newLineReader(r io.Reader, size int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(r, size)}
}

// next returns the next line without its newline. keep, when non-nil, sees
// the start of a line too long for the buffer and says whether the whole
// line is wanted; when it says no, the line is skipped and next returns it
// as nil with skipped=true. The returned slice is valid until the next call.
func (lr *lineReader) next(keep func(start []byte) bool) (line []byte, skipped bool, err error) {
	chunk, err := lr.br.ReadSlice('\n')
	if err == nil {
		lr.n++
		lr.torn = false
		return chunk[:len(chunk)-1], false, nil
	}
	if errors.Is(err, io.EOF) {
		if len(chunk) == 0 {
			return nil, false, io.EOF
		}
		lr.n++
		lr.torn = true
		return chunk, false, nil
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, false, err
	}
	lr.n++
	if keep != nil && !keep(chunk) {
		for errors.Is(err, bufio.ErrBufferFull) {
			_, err = lr.br.ReadSlice('\n')
		}
		lr.torn = errors.Is(err, io.EOF)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, true, err
		}
		return nil, true, nil
	}
	lr.long = append(lr.long[:0], chunk...)
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = lr.br.ReadSlice('\n')
		lr.long = append(lr.long, chunk...)
	}
	switch {
	case err == nil:
		lr.torn = false
		return lr.long[:len(lr.long)-1], false, nil
	case errors.Is(err, io.EOF):
		lr.torn = true
		return lr.long, false, nil
	}
	return nil, false, err
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
		s.p, s.e = 0, 0
		if err := s.fill(); err != nil {
			return nil, false, err
		}
		i := bytes.IndexByte(s.buf[:s.e], '\n')
		if i < 0 {
			s.long = append(s.long, s.buf[:s.e]...)
			if s.eof {
				s.p = s.e
				return s.long, false, nil
			}
			continue
		}
		s.long = append(s.long, s.buf[:i]...)
		s.p = i + 1
		return s.long, false, nil
	}
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
