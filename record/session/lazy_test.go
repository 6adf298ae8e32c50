package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

func TestLazyCreatesOnTheFirstRecord(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	var first transcript.Record
	l := &Lazy{Open: func(r transcript.Record) (*Writer, error) {
		first = r
		w := newSession(t, dir)
		return w, w.Append(&transcript.Config{Provider: "mock", Model: "mock-1"})
	}}
	if err := errors.Join(l.Append(), l.Sync()); err != nil || l.Writer() != nil {
		t.Fatalf("opened before any record: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the directory exists before any record: %v", err)
	}
	msg := &transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("hi")}}
	if err := l.Append(msg, &transcript.Summary{}); err != nil {
		t.Fatal(err)
	}
	if first != msg {
		t.Errorf("Open given %#v", first)
	}
	if err := errors.Join(l.Sync(), l.Close(), l.Close()); err != nil {
		t.Fatal(err)
	}
	s, err := Load(l.Writer().Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) != 3 || len(s.Configs()) != 1 || len(s.Messages()) != 1 {
		t.Errorf("records %d: %+v", len(s.Records), s.Records)
	}
}

func TestLazyWithNothingRecordedLeavesNothing(t *testing.T) {
	t.Parallel()
	l := &Lazy{Open: func(transcript.Record) (*Writer, error) { t.Fatal("opened"); return nil, nil }}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLazyOpenFailureSticks(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	opens := 0
	l := &Lazy{Open: func(transcript.Record) (*Writer, error) { opens++; return nil, boom }}
	msg := &transcript.Message{Role: transcript.RoleUser}
	if err := l.Append(msg); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if err := errors.Join(l.Append(msg), l.Sync(), l.Close()); !errors.Is(err, boom) || opens != 1 || l.Writer() != nil {
		t.Errorf("after a failed open: err %v, %d opens", err, opens)
	}
}
