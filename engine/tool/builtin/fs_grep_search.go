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

// grepper searches files with one pattern into one output.
type grepper struct {
	match    *lineMatcher
	redactor *tool.Redactor
	out      grepOutput
	buf      []byte // the block buffer, kept from file to file
	last     int    // the number of the last line kept in the current file
}

// entry searches the file e of a walk; errStop once the output is full.
func (g *grepper) entry(w *walker, e walkEntry) error {
	f, err := e.dir.OpenFile(e.name, readFlags, 0)
	if err != nil {
		w.cannot(e.path, err)
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil // swapped for something else since it was listed
	}
	full, err := g.file(f, e.path)
	switch {
	case err != nil:
		w.cannot(e.path, err)
	case full:
		return errStop
	}
	return nil
}

// file searches r, the content of the file shown as path, redacted as it
// is read, and adds what matched to the output: nothing for a binary file
// (a NUL byte anywhere in it). full is whether the output is full.
func (g *grepper) file(r io.Reader, path string) (full bool, err error) {
	// One more match than the output can take, to tell whether it stopped
	// with matches left.
	need := g.out.maxMatches - g.out.matches + 1
	lines, binary, err := g.search(g.redactor.Reader(r), need)
	switch {
	case err != nil:
		return false, err
	case binary:
		g.out.binary++
		return false, nil
	}
	return !g.out.add(path, lines), nil
}

// search reads r to the end and returns its first need matching lines,
// or binary when it holds a NUL byte.
func (g *grepper) search(r io.Reader, need int) (lines []grepLine, binary bool, err error) {
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
// at once; a line where a match starts that runs on into the next line is
// matched again alone, since a pattern matches within a line.
func (g *grepper) scan(block []byte, lineNo int, lines []grepLine, need int) []grepLine {
	re := g.match.re
	for pos := 0; pos < len(block) && len(lines) < need; {
		start, spans := pos, true
		if !g.match.perLine {
			loc := re.FindIndex(block[pos:])
			if loc == nil {
				break
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
