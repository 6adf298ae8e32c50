package html

import (
	"bufio"
	"errors"
	"io"
	"net/url"
	"os"
	"strconv"
)

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += n
	return n, err
}

// setOutput points the renderer at a new page: w, which is file when it
// is a part of the sidecar.
func (r *renderer) setOutput(w io.Writer, file *os.File) {
	r.out = &counter{w: w}
	r.w = bufio.NewWriterSize(r.out, 256<<10)
	r.file = file
}

// size is how many bytes the current page holds, counting the texts of
// the row being built.
func (r *renderer) size() int {
	n := r.pending
	if r.out != nil {
		n += r.out.n + r.w.Buffered()
	}
	return n
}

// maybeBreak starts the next part once the page has reached its budget:
// right after a taint checkpoint (so every row of the page has its band),
// or, when no checkpoint has come by twice the budget, after any row.
func (r *renderer) maybeBreak(checkpoint bool) {
	if r.err != nil || r.files == nil || r.title == "" && r.id == "" {
		return
	}
	if n := r.size(); n < r.budget || !checkpoint && n < 2*r.budget {
		return
	}
	next := r.part + 1
	if next == 1 {
		next = 2
	}
	r.exec("continued", struct{ Next string }{r.link + partName(next)})
	if r.err = r.endPart(); r.err != nil {
		return
	}
	f, err := r.files.create(next)
	if err != nil {
		r.err = err
		return
	}
	prev := partName(next - 1)
	if next == 2 {
		prev = "../" + url.PathEscape(r.files.page)
	}
	r.part, r.link = next, ""
	r.setOutput(f, f)
	if r.err = Head(r.w, "mecha session "+r.id+" · "+r.title+" · part "+strconv.Itoa(next)); r.err != nil {
		return
	}
	r.exec("part", struct {
		Title, ID, Prev, First string
		N                      int
	}{r.title, r.id, prev, "../" + url.PathEscape(r.files.page), next})
}

// endPart closes the current page: the band style, the foot, and its
// file if it is a part.
func (r *renderer) endPart() error {
	if r.err == nil {
		r.err = r.bands()
	}
	if r.err == nil {
		r.err = Foot(r.w)
	}
	if r.err == nil {
		r.err = r.w.Flush()
	}
	err := r.closePart()
	if r.err == nil {
		r.err = err
	}
	return r.err
}

// closePart closes the current part's file, if any.
func (r *renderer) closePart() error {
	if r.file == nil {
		return nil
	}
	f := r.file
	r.file = nil
	return errors.Join(f.Sync(), f.Close())
}
