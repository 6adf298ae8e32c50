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

	"github.com/mecha-agent/mecha/transcript"
)

// maxHeader bounds how much of a file PeekMeta reads looking for the end of
// the first line.
const maxHeader = 64 << 10

var headerBufs = sync.Pool{New: func() any { b := make([]byte, 4096); return &b }}

// PeekMeta reads a transcript's header and nothing else: at most the first
// 64 KiB, usually one small read. A file whose first line is not a meta
// record returns ErrNotSession.
func PeekMeta(path string) (transcript.Meta, error) {
	// Plain system calls: os.Open would also register the file with the
	// runtime poller and set a finalizer, which is much of the cost of
	// listing ten thousand sessions.
	fd, err := openRead(path)
	if err != nil {
		return transcript.Meta{}, fmt.Errorf("session: %w", &os.PathError{Op: "open", Path: path, Err: err})
	}
	defer syscall.Close(fd)
	bp := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(bp)
	buf := (*bp)[:cap(*bp)]
	n := 0
	for {
		m, err := readSome(fd, buf[n:])
		n += m
		if i := bytes.IndexByte(buf[n-m:n], '\n'); i >= 0 {
			return decodeMeta(buf[:n-m+i], path)
		}
		if err != nil {
			return transcript.Meta{}, fmt.Errorf("session: %w", &os.PathError{Op: "read", Path: path, Err: err})
		}
		if m == 0 {
			// End of file: a header with no newline after it is a complete
			// file of one line only if it parses; a torn one does not.
			return decodeMeta(buf[:n], path)
		}
		if n == len(buf) {
			if len(buf) >= maxHeader {
				return transcript.Meta{}, fmt.Errorf("%w: header longer than %d bytes: %s", ErrNotSession, maxHeader, path)
			}
			buf = append(buf, make([]byte, len(buf))...)
			*bp = buf
		}
	}
}

// openRead opens a file for reading with one system call. O_NONBLOCK keeps
// a FIFO from blocking the open until a writer comes; on a regular file it
// changes nothing.
func openRead(path string) (int, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			return fd, err
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

func decodeMeta(line []byte, path string) (transcript.Meta, error) {
	if kind, ok := transcript.PeekKind(line); ok && kind != transcript.KindMeta {
		return transcript.Meta{}, fmt.Errorf("%w: %s", ErrNotSession, path)
	}
	m, err := transcript.DecodeMeta(line)
	if err != nil {
		return transcript.Meta{}, fmt.Errorf("%w: %s", ErrNotSession, path)
	}
	return *m, nil
}

// Info is one listed session.
type Info struct {
	Meta transcript.Meta
	Path string
}

// Listing is the result of List.
type Listing struct {
	Sessions []Info // newest first
	// NotSessions are .jsonl files in the directory that are not
	// transcripts (or could not be read), with why.
	NotSessions []error
}

// List reads the header of every .jsonl file in dir and returns the
// sessions newest first. Its cost is one small read per file whatever the
// size of the transcripts. A missing directory lists as empty.
func List(dir string) (*Listing, error) {
	paths, err := sessionPaths(dir)
	if errors.Is(err, os.ErrNotExist) {
		return &Listing{}, nil
	}
	if err != nil {
		return nil, err
	}
	infos := make([]Info, len(paths))
	errs := make([]error, len(paths))
	Parallel(len(paths), func(i int) {
		infos[i].Path = paths[i]
		infos[i].Meta, errs[i] = PeekMeta(paths[i])
	})
	l := &Listing{Sessions: infos[:0]}
	for i := range infos {
		if errs[i] != nil {
			l.NotSessions = append(l.NotSessions, errs[i])
			continue
		}
		l.Sessions = append(l.Sessions, infos[i])
	}
	sort.SliceStable(l.Sessions, func(i, j int) bool { return newerFirst(l.Sessions[i].Meta, l.Sessions[j].Meta) })
	return l, nil
}

// sessionPaths returns the paths of the .jsonl files in dir that are not
// directories.
func sessionPaths(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), Ext) {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	return paths, nil
}

// newerFirst is the order of listings: newest first, then by id.
func newerFirst(a, b transcript.Meta) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.After(b.CreatedAt)
	}
	return a.ID > b.ID
}

// Parallel calls fn(0..n-1) on one goroutine per processor.
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
