package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// maxHeader is the longest header line (without its newline) a reader
// accepts, transcript.MaxHeader: a longer first line is not a session's.
const maxHeader = transcript.MaxHeader

var headerBufs = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

// PeekMeta reads a transcript's header and nothing else: at most the first
// 64 KiB, usually one small read. A file whose first line is not a meta
// record returns ErrNotSession, and one that is not a regular file
// safeopen.ErrNotRegular. The file name is the id: the header's id is
// replaced by it (see FileID).
func PeekMeta(path string) (transcript.Meta, error) {
	m, _, err := peekMeta(path)
	return m, err
}

// peekMeta is PeekMeta that also returns the id the header claims when it
// is not the file's.
func peekMeta(path string) (transcript.Meta, string, error) {
	// Plain system calls: os.Open would also register the file with the
	// runtime poller and set a finalizer, which is much of the cost of
	// listing ten thousand sessions.
	fd, _, err := safeopen.OpenFD(path)
	if err != nil {
		return transcript.Meta{}, "", fmt.Errorf("session: %w", err)
	}
	defer syscall.Close(fd)
	return headerFD(fd, path)
}

// headerFD reads the header from an open descriptor at its current offset
// (the start), usually in one small read.
func headerFD(fd int, path string) (transcript.Meta, string, error) {
	bp := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(bp)
	buf := (*bp)[:cap(*bp)]
	n := 0
	for {
		m, err := readSome(fd, buf[n:])
		n += m
		if i := bytes.IndexByte(buf[n-m:n], '\n'); i >= 0 {
			if n-m+i > maxHeader {
				return transcript.Meta{}, "", headerTooLong(path)
			}
			return decodeHeader(buf[:n-m+i], path)
		}
		if err != nil {
			return transcript.Meta{}, "", fmt.Errorf("session: %w", &os.PathError{Op: "read", Path: path, Err: err})
		}
		if m == 0 {
			// End of file: a header with no newline after it is a complete
			// file of one line only if it parses; a torn one does not.
			return decodeHeader(buf[:n], path)
		}
		if n == len(buf) {
			if len(buf) > maxHeader {
				return transcript.Meta{}, "", headerTooLong(path)
			}
			buf = append(buf, make([]byte, len(buf))...)
			*bp = buf
		}
	}
}

// readSome is one read(2), retried on EINTR; 0 bytes means end of file.
func readSome(fd int, p []byte) (int, error) {
	for {
		m, err := syscall.Read(fd, p)
		if err != syscall.EINTR {
			return max(m, 0), err
		}
	}
}

// decodeMeta decodes a header line, as it is written.
func decodeMeta(line []byte, path string) (transcript.Meta, error) {
	if kind, ok := transcript.PeekKind(line); ok && kind != transcript.KindMeta {
		return transcript.Meta{}, notSession(path, "")
	}
	m, err := transcript.DecodeMeta(line)
	if err != nil {
		return transcript.Meta{}, notSession(path, "")
	}
	return *m, nil
}

// decodeHeader decodes a header line and gives it the file's id, returning
// the id it claimed when that differs.
func decodeHeader(line []byte, path string) (transcript.Meta, string, error) {
	m, err := decodeMeta(line, path)
	if err != nil {
		return m, "", err
	}
	claimed := Identify(path, &m)
	return m, claimed, nil
}

// Info is one listed session.
type Info struct {
	// Meta is the header, its ID the file's (see FileID).
	Meta transcript.Meta
	Ref  Ref
	// HeaderID is the id the header claims when it is not the file's ("").
	HeaderID string
}

// Listing is the result of Store.List.
type Listing struct {
	Sessions []Info // newest first
	// NotSessions are the .jsonl files in the directory that are not
	// transcripts, cannot be read or are not regular files, with why.
	NotSessions []*FileError
}

// list reads the header of every .jsonl file in dir and returns the
// sessions newest first. Its cost is one small read per file whatever the
// size of the transcripts. A missing directory lists as empty.
func list(dir string) (*Listing, error) {
	names, err := sessionNames(dir)
	if errors.Is(err, os.ErrNotExist) {
		return &Listing{}, nil
	}
	if err != nil {
		return nil, err
	}
	infos := make([]Info, len(names))
	paths := make([]string, len(names))
	errs := make([]error, len(names))
	Parallel(len(names), func(i int) {
		paths[i] = filepath.Join(dir, names[i])
		infos[i].Ref = Ref{Dir: dir, ID: idOf(names[i])}
		infos[i].Meta, infos[i].HeaderID, errs[i] = peekMeta(paths[i])
	})
	l := &Listing{Sessions: infos[:0]}
	for i := range infos {
		if errs[i] != nil {
			l.NotSessions = append(l.NotSessions, skipped(paths[i], errs[i]))
			continue
		}
		l.Sessions = append(l.Sessions, infos[i])
	}
	sort.SliceStable(l.Sessions, func(i, j int) bool { return newerFirst(l.Sessions[i].Meta, l.Sessions[j].Meta) })
	return l, nil
}

// sessionNames returns the names of the .jsonl files in dir that are not
// directories.
func sessionNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), Ext) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// newerFirst is the order of listings: newest first, then by id.
func newerFirst(a, b transcript.Meta) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// Parallel calls fn(0..n-1) on one goroutine per processor (on the
// caller's alone when there is one): the store's readers, and the index's,
// stat and read files this way.
func Parallel(n int, fn func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// children returns the sessions in dir whose header names parent as
// their parent session, oldest first (see Store.Children).
func children(dir, parent string) ([]Info, error) {
	l, err := list(dir)
	if err != nil {
		return nil, err
	}
	var kids []Info
	for i := len(l.Sessions) - 1; i >= 0; i-- {
		if p := l.Sessions[i].Meta.Parent; p != nil && p.Session == parent {
			kids = append(kids, l.Sessions[i])
		}
	}
	return kids, nil
}
