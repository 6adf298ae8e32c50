package session

import (
	"bufio"
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
