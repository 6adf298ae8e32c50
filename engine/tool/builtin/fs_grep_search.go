package builtin

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/mecha-agent/mecha/engine/tool"
)

// readFlags open a file for reading without blocking on a FIFO (see
// Workspace.openRegular); what was opened is checked on the descriptor.
const readFlags = os.O_RDONLY | syscall.O_NONBLOCK

// Block sizes of fs_grep's reads: a file is searched a block of whole lines
// at a time, the block growing for a longer line up to grepMaxBlock; a line
// longer than that is searched in pieces of that size.
const (
	grepBlock    = 256 << 10
	grepMaxBlock = 8 << 20
)

// grepLine is a matching line as the result shows it.
type grepLine struct {
	n    int    // its number, from 1
	text []byte // the line, or the part shown when it is long
	from int    // where the part shown starts in a long line
	long int    // the length of a long line; 0 when shown whole
}

// searcher searches files with one pattern, one file at a time.
type searcher struct {
	match    *lineMatcher
	redactor *tool.Redactor
	buf      []byte // the block buffer, kept from file to file
	lower    []byte // the block in lower case, for a case-insensitive literal
	last     int    // the number of the last line kept in the current file
}

// search reads r to the end, redacted as it is read, and returns its
// first need matching lines, or binary when it holds a NUL byte.
func (g *searcher) search(r io.Reader, need int) (lines []grepLine, binary bool, err error) {
	r = g.redactor.Reader(r)
	if g.buf == nil {
		g.buf = make([]byte, grepBlock)
	}
	g.last = 0
	n, lineNo := 0, 1 // bytes carried over (the start of a line), the number of the line at buf[0]
	for eof := false; !eof; {
		m, err := io.ReadFull(r, g.buf[n:])
		switch {
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			eof = true
		case err != nil:
			return nil, false, err
		}
		data := g.buf[:n+m]
		if bytes.IndexByte(data[n:], 0) >= 0 {
			return nil, true, nil
		}
		end := len(data)
		if !eof {
			if i := bytes.LastIndexByte(data, '\n'); i >= 0 {
				end = i + 1
			} else if len(g.buf) < grepMaxBlock {
				g.buf = append(g.buf, make([]byte, len(g.buf))...)
				n = len(data)
				continue
			}
		}
		block := data[:end]
		if len(lines) < need {
			lines = g.scan(block, lineNo, lines, need)
		}
		lineNo += bytes.Count(block, []byte{'\n'})
		n = copy(g.buf, data[end:])
	}
	return lines, false, nil
}

// scan appends the matching lines of block (whole lines, the first
// numbered lineNo) to lines, up to need of them. The block is searched
// at once, for the pattern's literal when it has one (then each line that
// holds it is matched alone) or with the regexp; a line where a match
// starts that runs on into the next line is matched again alone, since a
// pattern matches within a line.
func (g *searcher) scan(block []byte, lineNo int, lines []grepLine, need int) []grepLine {
	re := g.match.re
	var find func(int) int
	find, g.lower = g.match.pre.finder(block, g.lower)
	for pos := 0; pos < len(block) && len(lines) < need; {
		start, spans := pos, true
		switch {
		case find != nil:
			if start = find(pos); start < 0 {
				return lines
			}
		case !g.match.perLine:
			loc := re.FindIndex(block[pos:])
			if loc == nil {
				return lines
			}
			start = pos + loc[0]
			spans = bytes.IndexByte(block[start:pos+loc[1]], '\n') >= 0
		}
		ls := pos + bytes.LastIndexByte(block[pos:start], '\n') + 1
		le := len(block)
		if i := bytes.IndexByte(block[start:], '\n'); i >= 0 {
			le = start + i
		}
		lineNo += bytes.Count(block[pos:ls], []byte{'\n'})
		text := block[ls:le]
		at := start - ls
		if spans {
			at = -1
			if loc := re.FindIndex(text); loc != nil {
				at = loc[0]
			}
		}
		if at >= 0 && lineNo != g.last {
			lines = append(lines, shownLine(lineNo, text, at))
			g.last = lineNo
		}
		pos = le + 1
		lineNo++
	}
	return lines
}

// shownLine is the line numbered n, which matches at byte at, as a result
// shows it: whole, or maxGrepLine bytes of it from a little before the
// match, cut on UTF-8 boundaries. A carriage return ending it is dropped.
func shownLine(n int, text []byte, at int) grepLine {
	text = bytes.TrimSuffix(text, []byte{'\r'})
	if len(text) <= maxGrepLine {
		return grepLine{n: n, text: bytes.Clone(text)}
	}
	from := max(0, min(at-maxGrepLine/5, len(text)-maxGrepLine))
	part := cutTail(text[from:], len(text)-from)
	from = len(text) - len(part)
	return grepLine{n: n, text: bytes.Clone(cutHead(part, maxGrepLine)), from: from, long: len(text)}
}

// String is the line without its number, with a note when it is cut.
func (l grepLine) String() string {
	if l.long == 0 {
		return string(l.text)
	}
	return fmt.Sprintf("%s [... line cut: bytes %d-%d of %d shown]", l.text, l.from, l.from+len(l.text), l.long)
}
