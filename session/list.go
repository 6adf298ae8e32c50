package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

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
	f, err := os.Open(path)
	if err != nil {
		return transcript.Meta{}, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	bp := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(bp)
	buf := (*bp)[:cap(*bp)]
	n := 0
	for {
		m, err := f.Read(buf[n:])
		n += m
		if i := bytes.IndexByte(buf[n-m:n], '\n'); i >= 0 {
			return decodeMeta(buf[:n-m+i], path)
		}
		if errors.Is(err, io.EOF) || (err == nil && m == 0) {
			// A header with no newline after it is a complete file of one
			// line only if it parses; a torn one does not.
			return decodeMeta(buf[:n], path)
		}
		if err != nil {
			return transcript.Meta{}, fmt.Errorf("session: %w", err)
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

func decodeMeta(line []byte, path string) (transcript.Meta, error) {
	if kind, ok := transcript.PeekKind(line); ok && kind != transcript.KindMeta {
		return transcript.Meta{}, fmt.Errorf("%w: %s", ErrNotSession, path)
	}
	rec, err := transcript.Decode(line)
	if err != nil {
		return transcript.Meta{}, fmt.Errorf("%w: %s", ErrNotSession, path)
	}
	m, ok := rec.(*transcript.Meta)
	if !ok {
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
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &Listing{}, nil
		}
		return nil, fmt.Errorf("session: %w", err)
	}
	var paths []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), Ext) {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
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
	sort.SliceStable(l.Sessions, func(i, j int) bool {
		a, b := l.Sessions[i].Meta, l.Sessions[j].Meta
		if !a.CreatedAt.Equal(b.CreatedAt) {
			return a.CreatedAt.After(b.CreatedAt)
		}
		return a.ID > b.ID
	})
	return l, nil
}

// Parallel calls fn(0..n-1) on a few goroutines: the work is mostly waiting
// on the file system, which overlaps well.
func Parallel(n int, fn func(i int)) {
	workers := min(max(runtime.GOMAXPROCS(0)*2, 4), n)
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
