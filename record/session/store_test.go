package session

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestStoreRefs: every way to a session (created, listed, resolved by id,
// prefix, Last or path) names it by the same Ref, and a file outside the
// store is a Ref in its own directory.
func TestStoreRefs(t *testing.T) {
	t.Parallel()
	st := &Store{Dir: t.TempDir(), Now: fixedNow}
	dir := st.Dir
	w, err := st.Create(transcript.Meta{Title: "the one"})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	ref := w.Ref()
	if want := (Ref{Dir: dir, ID: w.ID()}); ref != want || ref.Path() != w.Path() {
		t.Fatalf("Writer.Ref = %+v (%s), want %+v (%s)", ref, ref.Path(), want, w.Path())
	}
	for _, arg := range []string{w.ID(), w.ID()[:18], w.ID() + Ext, Last, w.Path()} {
		if got, err := st.Resolve(arg); err != nil || got != ref {
			t.Errorf("Resolve(%q) = %+v, %v; want %+v", arg, got, err, ref)
		}
	}
	l, err := st.List()
	if err != nil || len(l.Sessions) != 1 || l.Sessions[0].Ref != ref {
		t.Fatalf("List = %+v, %v", l, err)
	}
	s, err := st.Load(ref)
	if err != nil || s.Meta.ID != ref.ID || s.Meta.Title != "the one" {
		t.Fatalf("Load = %+v, %v", s, err)
	}
	if !st.Holds(ref) || (Ref{}).IsZero() != true || ref.IsZero() {
		t.Error("Holds or IsZero wrong for a session of the store")
	}

	other := t.TempDir()
	outside := writeFile(t, other, "elsewhere.jsonl", metaLine("20260101T000000-00000000", time.Now(), "x"))
	got, err := st.Resolve(outside)
	if err != nil || got != (Ref{Dir: other, ID: "elsewhere"}) || got.Path() != outside {
		t.Fatalf("Resolve(outside) = %+v, %v", got, err)
	}
	if st.Holds(got) {
		t.Error("a file outside the store is held by it")
	}
}

// TestStoreResolveLast: Last is the newest session, telling Skipped the
// files the listing passed over; an empty store has none.
func TestStoreResolveLast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	writeFile(t, dir, "20260805T091500-00000001.jsonl", metaLine("20260805T091500-00000001", day, "old"))
	writeFile(t, dir, "20260806T091500-00000002.jsonl", metaLine("20260806T091500-00000002", day.Add(24*time.Hour), "new"))
	writeFile(t, dir, "notes.jsonl", "not a session\n")
	var told []*FileError
	st := &Store{Dir: dir, Skipped: func(f []*FileError) { told = append(told, f...) }}
	got, err := st.Resolve(Last)
	if err != nil || got.ID != "20260806T091500-00000002" {
		t.Fatalf("Resolve(Last) = %+v, %v", got, err)
	}
	if len(told) != 1 || filepath.Base(told[0].Path) != "notes.jsonl" {
		t.Errorf("Skipped told %v", told)
	}
	if _, err := (&Store{Dir: t.TempDir()}).Resolve(Last); !errors.Is(err, ErrNotFound) {
		t.Errorf("empty store: %v", err)
	}
}

// TestStoreChildren: a session's children are the sessions beside it that
// name it as their parent, oldest first.
func TestStoreChildren(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC)
	create := func(m transcript.Meta) Ref {
		at = at.Add(time.Minute)
		m.CreatedAt = at
		w, err := (&Store{Dir: dir}).Create(m)
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		return w.Ref()
	}
	parent := create(transcript.Meta{Title: "parent"})
	first := create(transcript.Meta{Parent: &transcript.ParentCall{Session: parent.ID, CallID: "a"}})
	create(transcript.Meta{Title: "unrelated"})
	second := create(transcript.Meta{Parent: &transcript.ParentCall{Session: parent.ID, CallID: "b"}})
	kids, err := (&Store{Dir: dir}).Children(parent)
	if err != nil {
		t.Fatal(err)
	}
	var got []Ref
	for _, k := range kids {
		got = append(got, k.Ref)
	}
	if want := []Ref{first, second}; !reflect.DeepEqual(got, want) {
		t.Errorf("Children = %+v, want %+v", got, want)
	}
}

// TestStoreRemove: a session is removed with its lock file; one in use is
// not (a *BusyError), nor is a file outside the store.
func TestStoreRemove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := &Store{Dir: dir, Now: fixedNow}
	w := newSession(t, dir)
	ref := w.Ref()
	var busy *BusyError
	if err := st.Remove(ref); !errors.As(err, &busy) {
		t.Fatalf("removing a session in use: %v", err)
	}
	if _, err := os.Stat(ref.Path()); err != nil {
		t.Fatalf("a session in use was removed: %v", err)
	}
	w.Close()
	if err := st.Remove(ref); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{ref.Path(), LockPath(ref.Path())} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
	other := newSession(t, t.TempDir())
	other.Close()
	if err := st.Remove(other.Ref()); err == nil {
		t.Error("a session outside the store was removed")
	}
	if _, err := os.Stat(other.Path()); err != nil {
		t.Errorf("the session outside the store is gone: %v", err)
	}
}
