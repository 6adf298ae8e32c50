package session

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// fsyncs is a Store's fsync hook that notes the name of each file and
// directory it syncs, and can hold the syncs back (hold) or make those of
// one name fail (failName).
type fsyncs struct {
	mu       sync.Mutex
	calls    []string
	hold     chan struct{} // non-nil: each fsync waits until it is closed
	failName string
}

var errFsync = errors.New("fsync failed (injected)")

func (l *fsyncs) fsync(f *os.File) error {
	l.mu.Lock()
	l.calls = append(l.calls, f.Name())
	hold, fail := l.hold, l.failName != "" && l.failName == f.Name()
	l.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if fail {
		return errFsync
	}
	return f.Sync()
}

// take returns the fsyncs so far and forgets them.
func (l *fsyncs) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.calls
	l.calls = nil
	return c
}

// waitFor waits until n fsyncs happened since the last take.
func (l *fsyncs) waitFor(t *testing.T, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		l.mu.Lock()
		got := len(l.calls)
		l.mu.Unlock()
		if got >= n {
			return
		}
	}
	t.Fatalf("waited for %d fsyncs; got %q", n, l.take())
}

// within runs f and fails the test, saying why, if it has not returned
// within d.
func within(t *testing.T, d time.Duration, what, why string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %v: %s", what, d, why)
	}
}

func expectSyncs(t *testing.T, l *fsyncs, when string, want ...string) {
	t.Helper()
	if got := l.take(); !reflect.DeepEqual(got, want) {
		t.Errorf("%s: fsyncs %q, want %q", when, got, want)
	}
}

// TestForegroundSyncs: a writer that syncs in the foreground fsyncs the
// new file, then its directory (and the directory's parent when Create
// made the directory), before Create returns; each Sync fsyncs the file;
// Close fsyncs it once more, whatever Sync did before.
func TestForegroundSyncs(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	dir := filepath.Join(parent, "sessions")
	l := &fsyncs{}
	st := &Store{Dir: dir, Now: fixedNow, fsync: l.fsync}
	w, err := st.Create(transcript.Meta{Title: "fg"})
	if err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "Create of a new directory", parent, w.Path(), dir)

	w2, err := st.Create(transcript.Meta{Title: "fg2"})
	if err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "Create in an existing directory", w2.Path(), dir)
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "Close right after Create", w2.Path())

	if err := w.Append(numbered("fg", 0, 10)); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "Append") // an append alone is not an fsync
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "Sync", w.Path())
	if err := w.Sync(); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "a second Sync", w.Path())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "Close", w.Path())
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "a second Close")
}

// TestBackgroundSyncs: with BackgroundSync, Create and Sync return while
// the fsyncs they ask for are held back; the new file and its directory
// are fsynced once, by the background goroutine; Close waits for the
// fsyncs and adds one only for appends no background fsync covered.
func TestBackgroundSyncs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hold := make(chan struct{})
	l := &fsyncs{hold: hold}
	st := &Store{Dir: dir, Now: fixedNow, BackgroundSync: true, fsync: l.fsync}
	var w *Writer
	within(t, 5*time.Second, "Create", "it waits for the fsync", func() {
		var err error
		if w, err = st.Create(transcript.Meta{Title: "bg"}); err != nil {
			t.Error(err)
		}
	})
	if w == nil {
		t.FailNow()
	}
	close(hold) // let the background goroutine through
	l.waitFor(t, 2)
	expectSyncs(t, l, "Create", w.Path(), dir)

	// A Sync while an fsync is held back returns at once.
	hold2 := make(chan struct{})
	l.mu.Lock()
	l.hold = hold2
	l.mu.Unlock()
	if err := w.Append(numbered("bg", 0, 10)); err != nil {
		t.Fatal(err)
	}
	within(t, 5*time.Second, "Sync", "it waits for the fsync", func() {
		if err := w.Sync(); err != nil {
			t.Error(err)
		}
	})
	close(hold2)
	l.waitFor(t, 1)
	expectSyncs(t, l, "Sync", w.Path()) // the file only: the directory was done

	// Everything appended was covered by that fsync: Close adds none.
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l, "Close after a covering fsync")

	// An append that no background fsync covered is fsynced by Close.
	st.fsync = nil
	w2, err := st.Create(transcript.Meta{Title: "bg2"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	l2 := &fsyncs{}
	w3, err := OpenWriter(w2.Path())
	if err != nil {
		t.Fatal(err)
	}
	w3.fsync = l2.fsync
	w3.SyncInBackground()
	if err := w3.Append(numbered("bg", 1, 10)); err != nil {
		t.Fatal(err)
	}
	if err := w3.Close(); err != nil {
		t.Fatal(err)
	}
	expectSyncs(t, l2, "Close after an append never synced", w3.Path())
}

// TestCloseReturnsTheRecordingError: once recording has stopped (a record
// refused, a failed fsync in the foreground or in the background), Close
// says so instead of reporting a recording that succeeded.
func TestCloseReturnsTheRecordingError(t *testing.T) {
	t.Parallel()
	t.Run("refused record", func(t *testing.T) {
		t.Parallel()
		w := newSession(t, t.TempDir())
		huge := numbered("huge", 0, transcript.MaxLine+1)
		aerr := w.Append(huge)
		if aerr == nil {
			t.Fatal("a record longer than a reader accepts was appended")
		}
		if err := w.Close(); err == nil || err.Error() != aerr.Error() {
			t.Errorf("Close = %v, want the append's error %v", err, aerr)
		}
	})
	t.Run("foreground fsync", func(t *testing.T) {
		t.Parallel()
		l := &fsyncs{}
		st := &Store{Dir: t.TempDir(), Now: fixedNow, fsync: l.fsync}
		w, err := st.Create(transcript.Meta{Title: "x"})
		if err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		l.failName = w.Path()
		l.mu.Unlock()
		if err := w.Sync(); !errors.Is(err, errFsync) {
			t.Fatalf("Sync = %v", err)
		}
		if err := w.Append(numbered("x", 0, 10)); !errors.Is(err, errFsync) {
			t.Errorf("Append after a failed fsync = %v", err)
		}
		l.mu.Lock()
		l.failName = "" // Close's own fsync succeeds: the error is the stored one
		l.mu.Unlock()
		if err := w.Close(); !errors.Is(err, errFsync) || !strings.Contains(err.Error(), "recording of session") {
			t.Errorf("Close = %v, want the failed fsync", err)
		}
	})
	t.Run("background fsync", func(t *testing.T) {
		t.Parallel()
		w := newSession(t, t.TempDir())
		w.Close()
		w2, err := OpenWriter(w.Path())
		if err != nil {
			t.Fatal(err)
		}
		l := &fsyncs{failName: w.Path()}
		w2.fsync = l.fsync
		w2.SyncInBackground()
		if err := w2.Append(numbered("x", 0, 10)); err != nil {
			t.Fatal(err)
		}
		w2.Sync()
		l.waitFor(t, 1)
		l.mu.Lock()
		l.failName = ""
		l.mu.Unlock()
		if err := w2.Close(); !errors.Is(err, errFsync) {
			t.Errorf("Close = %v, want the failed background fsync", err)
		}
	})
}

// TestTwoWritersOnOneTranscript: two writers open on one transcript (two
// open files, as two processes have) append in turn; each append lets the
// file's lock go, so neither waits for the other to close, and every
// record arrives whole and in order.
func TestTwoWritersOnOneTranscript(t *testing.T) {
	t.Parallel()
	w1 := newSession(t, t.TempDir())
	w2, err := OpenWriter(w1.Path())
	if err != nil {
		t.Fatal(err)
	}
	within(t, 10*time.Second, "appending in turn through two writers", "an append waits for the file's lock the other writer's last append kept", func() {
		for i := range 6 {
			w := w1
			if i%2 == 1 {
				w = w2
			}
			if err := w.Append(numbered("w", i, 100+i*1000)); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for _, w := range []*Writer{w1, w2} {
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Load(w1.Path())
	if err != nil || s.Skipped != 0 || len(s.Messages()) != 6 {
		t.Fatalf("%v: %d messages, %d skipped", err, len(s.Messages()), s.Skipped)
	}
	for i, m := range s.Messages() {
		if _, n, ok := parseNumbered(m); !ok || n != i || len(m.Content[0].Text) != max(100+i*1000, len("w:0:")) {
			t.Errorf("record %d: %.40q (%d bytes)", i, m.Content[0].Text, len(m.Content[0].Text))
		}
	}
}
