package session

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

func TestScan(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	content := metaLine("20260805T091500-3f2a1b7c", day, "t") +
		`{"record":"message","role":"user","content":[{"type":"text","text":"hi"}]}` + "\n" +
		"\n" + // blank: ignored, but counted as a line
		`{"record":"meta","format":1,"id":"x"}` + "\n" +
		`{"record":"taint","private":true,"untrusted":false}` + "\n" +
		`{"record":"summary","usage":{"input_tokens":1`
	path := writeFile(t, dir, "20260805T091500-3f2a1b7c.jsonl", content)

	type seen struct {
		line int
		kind string
	}
	var got []seen
	sk, err := Scan(path, func(line int, rec transcript.Record) error {
		got = append(got, seen{line, rec.Kind()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []seen{{1, "meta"}, {2, "message"}, {5, "taint"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records = %v, want %v", got, want)
	}
	if sk.Count != 2 || len(sk.Lines) != 2 || sk.Lines[0].Line != 4 || sk.Lines[0].Torn || sk.Lines[1].Line != 6 || !sk.Lines[1].Torn {
		t.Errorf("skips = %+v, want line 4 (a second meta) and torn line 6", sk)
	}

	// Load is built on the same scan and reports the same.
	s, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Skipped != sk.Count || !reflect.DeepEqual(s.SkippedLines, sk.Lines) || len(s.Records) != 2 || s.Meta.ID != "20260805T091500-3f2a1b7c" {
		t.Errorf("Load = %+v", s)
	}
}

func TestScanErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	good := writeFile(t, dir, "good.jsonl", metaLine("20260805T091500-3f2a1b7c", day, "t")+`{"record":"taint","private":false,"untrusted":false}`+"\n")
	notSession := writeFile(t, dir, "other.jsonl", `{"record":"message","role":"user","content":[]}`+"\n")
	empty := writeFile(t, dir, "empty.jsonl", "")
	nop := func(int, transcript.Record) error { return nil }

	for _, p := range []string{notSession, empty} {
		if _, err := Scan(p, nop); !errors.Is(err, ErrNotSession) || !strings.Contains(err.Error(), p) {
			t.Errorf("Scan(%s) = %v, want ErrNotSession naming the file", filepath.Base(p), err)
		}
	}
	if _, err := Scan(filepath.Join(dir, "missing.jsonl"), nop); err == nil || !strings.HasPrefix(err.Error(), "session: ") {
		t.Errorf("Scan(missing) = %v", err)
	}
	// The caller's error stops the scan and comes back unwrapped.
	stop := errors.New("enough")
	calls := 0
	_, err := Scan(good, func(int, transcript.Record) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("Scan = %v after %d calls, want the caller's error after 1", err, calls)
	}
}
