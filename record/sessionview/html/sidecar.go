package html

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"

	"github.com/mecha-agent/mecha/internal/atomicfile"
)

// SidecarDir is the directory beside the page at page that holds the
// whole texts the page has no room for.
func SidecarDir(page string) string { return page + ".files" }

// Sidecar is a page's directory: the whole texts the page has no room
// for, one plain-text file each (NNNN.txt, mode 0600, exactly the
// transcript's text) linked from where the page cuts it, and the parts the
// session continues in (part-NNNN.html). It is written under a temporary name beside the
// page and takes its place when the page does (Commit), so a page and its
// texts are always from the same view; a page that needs none removes the
// one a previous view left.
type Sidecar struct {
	dir   string // the final directory
	tmp   string // where the files are written until Commit
	link  string // the directory as the page links it, relative to the page
	page  string // the page's file name
	n     int    // texts written
	parts int    // the last part written (0: none)
	old   string // the previous directory, moved aside by Commit
}

var sidecarFile = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9]{4,}\.txt|part-[0-9]{4,}\.html)$`) })

// NewSidecar prepares the sidecar of the page to be written at page. It
// fails, writing nothing, when the sidecar's name is taken by anything
// but a sidecar: a file, or a directory holding other files.
func NewSidecar(page string) (*Sidecar, error) {
	dir := SidecarDir(page)
	if err := checkSidecar(dir); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(page), "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %v", page, unwrapPath(err))
	}
	return &Sidecar{dir: dir, tmp: tmp, link: url.PathEscape(filepath.Base(dir)), page: filepath.Base(page)}, nil
}

func checkSidecar(dir string) error {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", dir, unwrapPath(err))
	}
	if !fi.IsDir() {
		return fmt.Errorf("cannot write the page's texts to %s: it exists and is not a directory", dir)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", dir, unwrapPath(err))
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !sidecarFile().MatchString(e.Name()) {
			return fmt.Errorf("cannot replace %s: it holds %s, which no page of mecha wrote", dir, e.Name())
		}
	}
	return nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// add writes one whole text and returns its name in the sidecar.
func (s *Sidecar) add(text string) (string, error) {
	s.n++
	name := fmt.Sprintf("%04d.txt", s.n)
	if err := os.WriteFile(filepath.Join(s.tmp, name), []byte(text), 0o600); err != nil {
		return "", fmt.Errorf("cannot write %s: %v", filepath.Join(s.dir, name), unwrapPath(err))
	}
	return name, nil
}

// partName is the file name of part n (n >= 2) of the session.
func partName(n int) string { return fmt.Sprintf("part-%04d.html", n) }

// create creates part n's file.
func (s *Sidecar) create(n int) (*os.File, error) {
	s.parts = max(s.parts, n)
	f, err := os.OpenFile(filepath.Join(s.tmp, partName(n)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot write %s: %v", filepath.Join(s.dir, partName(n)), unwrapPath(err))
	}
	return f, nil
}

// Files is how many texts went to the sidecar.
func (s *Sidecar) Files() int { return s.n }

// Parts is how many pages the session took: 1, or the number of the
// last part in the sidecar.
func (s *Sidecar) Parts() int { return max(1, s.parts) }

// Commit puts the new texts in place, just before the page itself is
// renamed into place: the previous directory is moved aside (Cleanup
// removes it), and the new one, if the page links any text, renamed to
// the sidecar's name.
func (s *Sidecar) Commit() error {
	if _, err := os.Lstat(s.dir); err == nil {
		s.old = s.tmp + "-old"
		if err := os.Rename(s.dir, s.old); err != nil {
			s.old = ""
			return fmt.Errorf("cannot replace %s: %v", s.dir, unwrapPath(err))
		}
	}
	if s.n == 0 && s.parts == 0 {
		return nil
	}
	if err := os.Rename(s.tmp, s.dir); err != nil {
		return fmt.Errorf("cannot write %s: %v", s.dir, unwrapPath(err))
	}
	return atomicfile.SyncDir(filepath.Dir(s.dir))
}

// Cleanup removes what is left: the temporary directory of a view that
// failed or needed no sidecar, and the previous sidecar.
func (s *Sidecar) Cleanup() {
	os.RemoveAll(s.tmp)
	if s.old != "" {
		os.RemoveAll(s.old)
	}
}
