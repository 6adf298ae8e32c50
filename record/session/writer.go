package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Store is the session store: a directory of transcripts, through which
// sessions are resolved, listed, read, locked, created and appended to
// (its methods are in store.go, Create here).
type Store struct {
	Dir  string
	Now  func() time.Time // nil: time.Now
	Rand io.Reader        // nil: crypto/rand
	// Skipped is told the .jsonl files that resolving Last passed over
	// (not sessions, not regular files, unreadable); nil: nobody.
	Skipped func([]*FileError)
	// BackgroundSync makes the writers Create returns sync in the
	// background (see Writer.SyncInBackground), the new file and its
	// directory included.
	BackgroundSync bool
	// Index, when set, answers the listings (see Index) and is told of
	// each session its writers close and each it removes.
	Index Index

	// fsync makes a file or a directory durable; nil: (*os.File).Sync.
	// Tests replace it to see which fsyncs happen.
	fsync func(*os.File) error
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// Limits of the header's text fields, in runes. A longer value is clipped
// with a mark ("…") when the session is created, so that whatever a front
// end passes (a title of 70 KB, say) the header stays well under
// transcript.MaxHeader, even with every character escaped as \uXXXX.
const (
	MaxTitle     = 1024
	MaxWorkspace = 4096
	MaxName      = 256 // provider, model, replay_of
)

// clipHeader clips the header's text fields to their limits.
func clipHeader(m *transcript.Meta) {
	m.Title = textfmt.Clip(m.Title, MaxTitle)
	m.Workspace = textfmt.Clip(m.Workspace, MaxWorkspace)
	m.Provider = textfmt.Clip(m.Provider, MaxName)
	m.Model = textfmt.Clip(m.Model, MaxName)
	m.ReplayOf = textfmt.Clip(m.ReplayOf, MaxName)
	m.RerunOf = textfmt.Clip(m.RerunOf, MaxName)
	m.ReflectsOn = textfmt.Clip(m.ReflectsOn, MaxName)
	if p := m.Parent; p != nil {
		m.Parent = &transcript.ParentCall{Session: textfmt.Clip(p.Session, MaxName), CallID: textfmt.Clip(p.CallID, MaxName)}
	}
	if f := m.ImportedFrom; f != nil {
		c := *f
		c.Harness = textfmt.Clip(c.Harness, MaxName)
		c.Path = textfmt.Clip(c.Path, MaxWorkspace)
		if n := len(c.Approximate); n > transcript.MaxApproximate {
			c.ApproximateMore += n - transcript.MaxApproximate
			c.Approximate = c.Approximate[:transcript.MaxApproximate]
		}
		for i, id := range c.Approximate {
			c.Approximate[i] = textfmt.Clip(id, MaxName)
		}
		m.ImportedFrom = &c
	}
}

// Create makes a new session file holding meta as its header and returns a
// writer for it, which holds the session (see Acquire) until it is closed. An empty meta.ID is filled with a fresh id, a zero
// CreatedAt with the current time, and Format with FormatVersion. Text
// fields longer than their limits (MaxTitle, MaxWorkspace, MaxName) are
// clipped with a mark: the writer never writes a header a reader refuses.
func (s *Store) Create(meta transcript.Meta) (*Writer, error) {
	clipHeader(&meta)
	if err := ensureDir(s.Dir, s.fsync); err != nil {
		return nil, err
	}
	if meta.CreatedAt.IsZero() {
		meta.CreatedAt = s.now()
	}
	if meta.Format == 0 {
		meta.Format = transcript.FormatVersion
	}
	pick := meta.ID == ""
	for attempt := 0; ; attempt++ {
		if pick {
			id, err := NewID(meta.CreatedAt, s.Rand)
			if err != nil {
				return nil, err
			}
			meta.ID = id
		} else if !ValidID(meta.ID) {
			return nil, fmt.Errorf("%w %q", ErrInvalidID, meta.ID)
		}
		path := filepath.Join(s.Dir, meta.ID+Ext)
		// The new session is held from before it exists, so that nothing
		// else attaches to it between its creation and its first record.
		lock, err := Acquire(path)
		var busy *BusyError
		if errors.As(err, &busy) && pick && attempt < 16 {
			continue
		}
		if err != nil {
			return nil, err
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) && pick && attempt < 16 {
			lock.Release()
			continue // two runs in the same second drew the same suffix
		}
		if err != nil {
			lock.Release()
			return nil, fmt.Errorf("session: create: %w", err)
		}
		w := &Writer{f: f, path: path, id: meta.ID, end: -1, lock: lock, fsync: s.fsync, index: s.Index}
		if err := w.Append(&meta); err != nil {
			f.Close()
			os.Remove(path)
			lock.Release()
			return nil, err
		}
		if s.BackgroundSync {
			w.syncDir = s.Dir
			w.SyncInBackground()
			w.Sync()
			return w, nil
		}
		if err := w.Sync(); err != nil {
			f.Close()
			os.Remove(path)
			lock.Release()
			return nil, err
		}
		if err := syncDir(s.Dir, s.fsync); err != nil {
			f.Close()
			lock.Release()
			return nil, err
		}
		return w, nil
	}
}

// OpenWriter opens an existing session to append to it, as a resumed run
// does. The file must start with a meta header. The caller holds the
// session (Acquire), from before it reads the session until it has closed
// the writer.
func OpenWriter(path string) (*Writer, error) {
	meta, err := PeekMeta(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("session: open for append: %w", err)
	}
	return &Writer{f: f, path: path, id: meta.ID, end: -1}, nil
}

// Writer appends records to one session file. Its methods are not meant
// to be called from several goroutines at once.
type Writer struct {
	f    *os.File
	path string
	id   string
	lock *Lock // the session's, released by Close; nil when the caller holds it

	fsync func(*os.File) error // nil: (*os.File).Sync (see Store)
	index Index                // told when the writer closes; nil: none

	mu  sync.Mutex
	err error // sticky: once a write or sync failed, recording has stopped

	// Background syncing (see SyncInBackground).
	kick    chan struct{}
	done    chan struct{}
	closing chan struct{}
	syncDir string // a directory the background goroutine must sync once

	closed bool

	buf bytes.Buffer // reused to encode records
	end int64        // file size after this writer's last append, -1 unknown

	// appended counts successful appends; synced is the count the last
	// background fsync covered, so Close knows whether one more is needed.
	appended, synced atomic.Int64
}

// GroupCommit is the least time between two background fsyncs: requests
// that arrive sooner are merged into one, as a database's group commit
// does. A turn boundary is then on disk at most this long (plus the fsync)
// after it was asked for; runs whose turns take longer than this, as any
// real model's do, get one fsync per turn.
const GroupCommit = 50 * time.Millisecond

// SyncInBackground makes Sync return at once: the fsync it asks for runs on
// another goroutine while the caller goes on (the next model call, say);
// requests that arrive while one runs, or within GroupCommit of the last
// one, are merged into the next. A failed background fsync stops recording
// like a failed write, and is returned by the next Append, Sync or Close.
// Close always waits for a final fsync. The data is in the kernel as soon
// as Append returns, so this only widens the window in which a crash of the
// whole machine, not of the process, can lose the last turn.
func (w *Writer) SyncInBackground() {
	if w.kick != nil {
		return
	}
	w.kick, w.done, w.closing = make(chan struct{}, 1), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(w.done)
		var last time.Time
		for range w.kick {
			if wait := GroupCommit - time.Since(last); !last.IsZero() && wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-w.closing: // Close syncs right away
				}
				t.Stop()
			}
			last = time.Now()
			covered := w.appended.Load()
			if err := w.sync(); err != nil {
				w.fail(w.ioErr("sync", err))
			}
			if w.syncDir != "" {
				if err := syncDir(w.syncDir, w.fsync); err != nil {
					w.fail(err)
				}
				w.syncDir = ""
			}
			w.synced.Store(covered)
		}
	}()
}

func (w *Writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Path returns the session file's path.
func (w *Writer) Path() string { return w.path }

// ID returns the session id.
func (w *Writer) ID() string { return w.id }

// Append writes records, each as one line in one write, under an exclusive
// lock on the file. If a write fails the partial line is removed and every
// later call returns the same error: a transcript with a hole in it would
// mislead whoever reads it, so recording stops loudly instead.
func (w *Writer) Append(recs ...transcript.Record) error {
	if err := w.failed(); err != nil {
		return err
	}
	w.buf.Reset()
	ends := make([]int, len(recs))
	for i, r := range recs {
		if err := transcript.AppendEncode(&w.buf, r); err != nil {
			return fmt.Errorf("session: %w", err)
		}
		ends[i] = w.buf.Len()
		// What a reader would refuse is never written: the line (without
		// its newline) must fit the reader's limit.
		limit, start := transcript.MaxLine, 0
		if _, ok := r.(*transcript.Meta); ok {
			limit = transcript.MaxHeader
		}
		if i > 0 {
			start = ends[i-1]
		}
		if n := ends[i] - start - 1; n > limit {
			return w.fail(fmt.Errorf("session: a %s record of %d bytes is longer than the %d a reader accepts", r.Kind(), n, limit))
		}
	}
	fd := int(w.f.Fd())
	if err := flock(fd, syscall.LOCK_EX); err != nil {
		return w.fail(fmt.Errorf("session: lock %s: %w", w.path, err))
	}
	defer flock(fd, syscall.LOCK_UN)
	size, err := w.endsClean()
	if err != nil {
		return w.fail(err)
	}
	all, start := w.buf.Bytes(), 0
	for _, end := range ends {
		line := all[start:end]
		start = end
		n, err := w.f.Write(line)
		if err == nil && n != len(line) {
			err = io.ErrShortWrite
		}
		if err != nil {
			// Take the partial line back so the next reader does not find
			// half a record glued to whatever comes after it.
			if terr := w.f.Truncate(size); terr != nil {
				err = fmt.Errorf("%w (and removing the partial record failed: %v)", err, terr)
			}
			w.end = -1
			return w.fail(w.ioErr("write", err))
		}
		size += int64(n)
	}
	w.end = size
	w.appended.Add(1)
	if w.buf.Cap() > 1<<20 {
		w.buf = bytes.Buffer{} // do not hold on to one huge record's worth
	}
	return nil
}

// endsClean makes sure the file ends in a newline, so that a line torn by a
// process that died mid-write stays a line of its own, and returns the size.
// It is called with the lock held.
func (w *Writer) endsClean() (int64, error) {
	st, err := w.f.Stat()
	if err != nil {
		return 0, w.ioErr("stat", err)
	}
	size := st.Size()
	if size == 0 || size == w.end {
		// Empty, or just as this writer left it: ending in a newline.
		return size, nil
	}
	var last [1]byte
	if _, err := w.f.ReadAt(last[:], size-1); err != nil {
		return 0, w.ioErr("read", err)
	}
	if last[0] == '\n' {
		return size, nil
	}
	if _, err := w.f.Write([]byte{'\n'}); err != nil {
		return 0, w.ioErr("write", err)
	}
	return size + 1, nil
}

// ioErr names the file in an error from it once: the os package's errors
// already carry the operation and the path, bare ones get them here.
func (w *Writer) ioErr(op string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("session: %w", err)
	}
	return fmt.Errorf("session: %s %s: %w", op, w.path, err)
}

func (w *Writer) fail(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = fmt.Errorf("%w; recording of session %s has stopped", err, w.id)
	}
	return w.err
}

// Sync flushes the file to stable storage, or asks for that to happen in
// the background after SyncInBackground.
func (w *Writer) Sync() error {
	if w.kick != nil {
		select {
		case w.kick <- struct{}{}:
		default: // one is already due; it will cover this request
		}
		return w.failed()
	}
	if err := w.sync(); err != nil {
		return w.fail(w.ioErr("sync", err))
	}
	return nil
}

// sync fsyncs the file.
func (w *Writer) sync() error { return fsyncWith(w.fsync, w.f) }

// fsyncWith fsyncs f with fsync, or with f.Sync when fsync is nil.
func fsyncWith(fsync func(*os.File) error, f *os.File) error {
	if fsync != nil {
		return fsync(f)
	}
	return f.Sync()
}

// Close syncs and closes the file, waiting for any background sync first.
// It returns the first error recording met. Closing twice is harmless.
func (w *Writer) Close() error {
	background := w.kick != nil
	if background {
		close(w.closing)
		close(w.kick)
		<-w.done
		w.kick = nil
	}
	if w.closed {
		return w.failed()
	}
	w.closed = true
	var serr error
	if !background || w.synced.Load() != w.appended.Load() {
		serr = w.sync() // whatever the last background fsync did not cover
	}
	cerr := w.f.Close()
	w.lock.Release() // after the last write is on disk
	if w.index != nil {
		w.index.Closed(w.id) // best-effort: the index is a cache
	}
	switch {
	case w.failed() != nil:
		return w.failed()
	case serr != nil:
		return w.ioErr("sync", serr)
	case cerr != nil:
		return fmt.Errorf("session: close %s: %w", w.path, cerr)
	}
	return nil
}

func flock(fd, how int) error {
	for {
		err := syscall.Flock(fd, how)
		if err != syscall.EINTR {
			return err
		}
	}
}
