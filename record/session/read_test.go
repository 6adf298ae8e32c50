package session

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func metaLine(id string, created time.Time, title string) string {
	b, _ := transcript.Encode(&transcript.Meta{Format: 1, ID: id, CreatedAt: created, Provider: "mock", Model: "m", Title: title})
	return string(b)
}

func TestResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	for _, id := range []string{"20260805T091500-3f2a1b7c", "20260805T091500-99999999", "20260806T000000-00000000"} {
		writeFile(t, dir, id+".jsonl", metaLine(id, day, id))
	}
	outside := writeFile(t, t.TempDir(), "elsewhere.jsonl", metaLine("20260101T000000-00000000", day, "x"))
	tests := []struct {
		arg  string
		want string // file name, or "" for an error
		err  error
	}{
		{"20260805T091500-3f2a1b7c", "20260805T091500-3f2a1b7c.jsonl", nil},
		{"20260805T091500-3f", "20260805T091500-3f2a1b7c.jsonl", nil},
		{"20260806", "20260806T000000-00000000.jsonl", nil},
		{"20260805T091500-3f2a1b7c.jsonl", "20260805T091500-3f2a1b7c.jsonl", nil},
		{outside, "elsewhere.jsonl", nil},
		{"20260805T091500", "", &AmbiguousError{}},
		{"2027", "", ErrNotFound},
		{"../x", "", ErrInvalidID},
		{"..", "", ErrInvalidID},
		{"/etc/passwd", "", ErrInvalidID},
		{"a/b", "", ErrInvalidID},
		{"x\x00y", "", ErrInvalidID},
		{"", "", ErrInvalidID},
		{"*", "", ErrInvalidID},
		{"2026 0805", "", ErrInvalidID},
		{strings.Repeat("2", 200), "", ErrInvalidID},
		{filepath.Join(dir, "missing.jsonl"), "", os.ErrNotExist},
	}
	st := &Store{Dir: dir}
	for _, tt := range tests {
		got, err := st.Resolve(tt.arg)
		switch {
		case tt.want != "":
			if err != nil || filepath.Base(got.Path()) != tt.want || got.ID+Ext != tt.want {
				t.Errorf("Resolve(%q) = %q, %v; want %s", tt.arg, got, err, tt.want)
			}
		default:
			var amb *AmbiguousError
			if _, want := tt.err.(*AmbiguousError); want {
				if !errors.As(err, &amb) || len(amb.Candidates) != 2 || !strings.Contains(err.Error(), "20260805T091500-99999999, 20260805T091500-3f2a1b7c") {
					t.Errorf("Resolve(%q) = %v, want ambiguity listing both, newest first", tt.arg, err)
				}
				continue
			}
			if !errors.Is(err, tt.err) {
				t.Errorf("Resolve(%q) = %q, %v; want %v", tt.arg, got, err, tt.err)
			}
		}
	}
	if _, err := (&Store{Dir: filepath.Join(dir, "nope")}).Resolve("2026"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing store: %v", err)
	}
}

func TestPeekMeta(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	ok := writeFile(t, dir, "ok.jsonl", metaLine("20260805T091500-3f2a1b7c", day, "hi")+`{"record":"message"`)
	noNewline := writeFile(t, dir, "one.jsonl", strings.TrimSuffix(metaLine("20260805T091500-00000001", day, "one"), "\n"))
	longTitle := writeFile(t, dir, "long.jsonl", metaLine("20260805T091500-00000002", day, strings.Repeat("é", 10000)))
	for path, want := range map[string]string{ok: "hi", noNewline: "one", longTitle: strings.Repeat("é", 10000)} {
		m, err := PeekMeta(path)
		if err != nil || m.Title != want {
			t.Errorf("PeekMeta(%s) = %q, %v", filepath.Base(path), m.Title, err)
		}
	}
	for name, content := range map[string]string{
		"empty.jsonl":   "",
		"message.jsonl": `{"record":"message","role":"user","content":[]}` + "\n",
		"torn.jsonl":    `{"record":"meta","id":"2026`,
		"binary.jsonl":  "\x00\x01\x02",
		"huge.jsonl":    `{"record":"meta","title":"` + strings.Repeat("x", 100<<10) + "\"}\n",
	} {
		if _, err := PeekMeta(writeFile(t, dir, name, content)); !errors.Is(err, ErrNotSession) {
			t.Errorf("PeekMeta(%s) = %v, want ErrNotSession", name, err)
		}
	}
}

func TestList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	writeFile(t, dir, "20260805T091500-00000001.jsonl", metaLine("20260805T091500-00000001", day, "a"))
	writeFile(t, dir, "20260805T091500-00000002.jsonl", metaLine("20260805T091500-00000002", day, "b"))
	writeFile(t, dir, "20260807T000000-00000000.jsonl", metaLine("20260807T000000-00000000", day.Add(48*time.Hour), "newest"))
	writeFile(t, dir, "notes.jsonl", `{"some":"other log"}`+"\n")
	writeFile(t, dir, "README.txt", "not a transcript")
	os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700)
	l, err := (&Store{Dir: dir}).List()
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, s := range l.Sessions {
		titles = append(titles, s.Meta.Title)
	}
	if !reflect.DeepEqual(titles, []string{"newest", "b", "a"}) {
		t.Errorf("order = %v", titles)
	}
	if len(l.NotSessions) != 1 || !errors.Is(l.NotSessions[0], ErrNotSession) {
		t.Errorf("not sessions = %v", l.NotSessions)
	}
	if l, err := (&Store{Dir: filepath.Join(dir, "missing")}).List(); err != nil || len(l.Sessions) != 0 {
		t.Errorf("missing dir = %v, %v", l, err)
	}
}

func TestTaintTimeline(t *testing.T) {
	t.Parallel()
	msg := func() transcript.Record { return numbered("m", 0, 1) }
	tests := []struct {
		name    string
		records []transcript.Record
		want    []Coverage
		merged  transcript.Taint
	}{
		{"no checkpoints: unknown, never clean", []transcript.Record{msg(), msg()},
			[]Coverage{{}, {}}, transcript.Taint{}},
		{"one run", []transcript.Record{msg(), msg(), &transcript.Taint{Private: true}},
			[]Coverage{{true, transcript.Taint{Private: true}}, {true, transcript.Taint{Private: true}}}, transcript.Taint{Private: true}},
		{"a later clean checkpoint does not disarm", []transcript.Record{msg(), &transcript.Taint{Untrusted: true}, msg(), &transcript.Taint{}},
			[]Coverage{{true, transcript.Taint{Untrusted: true}}, {true, transcript.Taint{Untrusted: true}}}, transcript.Taint{Untrusted: true}},
		{"clean then armed; trailing message unknown", []transcript.Record{msg(), &transcript.Taint{}, msg(), &transcript.Taint{Private: true}, msg()},
			[]Coverage{{true, transcript.Taint{}}, {true, transcript.Taint{Private: true}}, {}}, transcript.Taint{Private: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Session{Records: tt.records}
			got := s.TaintTimeline()
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("timeline = %+v, want %+v", got, tt.want)
			}
			if s.Taint() != tt.merged {
				t.Errorf("merged = %+v", s.Taint())
			}
			for i, c := range got {
				if !c.Known && c.Clean() {
					t.Errorf("message %d: unknown provenance reported clean", i)
				}
			}
		})
	}
	if !(Coverage{Known: true}).Clean() {
		t.Error("a known clean message should be clean")
	}
}

func TestStartTaint(t *testing.T) {
	t.Parallel()
	msg := func() transcript.Record { return numbered("m", 0, 1) }
	armed := transcript.Taint{Private: true, Untrusted: true}
	tests := []struct {
		name      string
		records   []transcript.Record
		want      transcript.Taint
		uncovered int
	}{
		{"empty", nil, transcript.Taint{}, 0},
		{"covered and clean", []transcript.Record{msg(), &transcript.Taint{}}, transcript.Taint{}, 0},
		{"checkpoints merge", []transcript.Record{msg(), &transcript.Taint{Private: true}, msg(), &transcript.Taint{Untrusted: true}}, armed, 0},
		{"a later clean checkpoint does not disarm", []transcript.Record{msg(), &transcript.Taint{Private: true, Untrusted: true}, msg(), &transcript.Taint{}}, armed, 0},
		{"an older build: no checkpoint", []transcript.Record{msg(), msg()}, armed, 2},
		{"a killed run: the last message uncovered", []transcript.Record{msg(), &transcript.Taint{}, msg()}, armed, 1},
	}
	for _, tt := range tests {
		s := &Session{Records: tt.records}
		if got, n := s.StartTaint(); got != tt.want || n != tt.uncovered {
			t.Errorf("%s: StartTaint = %+v, %d; want %+v, %d", tt.name, got, n, tt.want, tt.uncovered)
		}
	}
}

func TestReadSummariesMatchesLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fixtures := v1Fixtures(t)
	w := newSession(t, dir)
	w.Append(&transcript.Summary{Turns: 1, Usage: transcript.Usage{InputTokens: 3}}, numbered("x", 0, 1<<20),
		&transcript.Summary{Turns: 2, Provider: "other"})
	w.Close()
	head := metaLine("20260805T091500-0000000a", time.Now(), "odd")
	long := strings.Repeat("x", 3*summaryBufSize)
	odd := writeFile(t, dir, "odd.jsonl", head+
		`{"turns":4,"record":"summary","usage":{"output_tokens":9}}`+"\n"+
		`{"record":"message","role":"user","content":[{"type":"text","text":"the word \"summary\" in a message"}]}`+"\n"+
		`{"record":"summary","usage":{"output_tokens":1},"turns":1`)
	cases := map[string]string{
		"odd.jsonl": "",
		// Another layout, the kind behind an escape: only decoding tells.
		"escaped.jsonl": head + `{"turns":5,"record":"summ\u0061ry"}` + "\n",
		// Summaries first, in the middle, last without a newline; blank
		// lines, CRLF, indented lines and lines longer than the buffer.
		"anywhere.jsonl": head + `{"record":"summary","turns":1}` + "\r\n\n" +
			`{"record":"message","role":"user","content":[{"type":"text","text":"` + long + `"}]}` + "\n" +
			"  \t" + `{"record":"summary","turns":2,"model":"` + long + `"}` + "\n" +
			`{"model":"` + long + `","record":"summary","turns":3}` + "\n" +
			`{"model":"` + long + `","turns":3}` + "\n" +
			`{"record":"taint","private":true}` + "\n" +
			`{"record":"summary","turns":4}`,
		// A torn summary longer than the buffer is skipped.
		"torn-long.jsonl": head + `{"record":"summary","turns":1}` + "\n" + `{"record":"summary","model":"` + long,
		// A header with no newline is a session of one line.
		"header-only.jsonl": strings.TrimSuffix(head, "\n"),
	}
	paths := append(fixtures, w.Path(), odd)
	for name, content := range cases {
		if content != "" {
			paths = append(paths, writeFile(t, dir, name, content))
		}
	}
	for _, path := range paths {
		s, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		meta, sums, err := ReadSummaries(path)
		if err != nil {
			t.Fatal(err)
		}
		if meta.ID != s.Meta.ID || !reflect.DeepEqual(sums, s.Summaries()) {
			t.Errorf("%s: ReadSummaries = %+v, Load = %+v", filepath.Base(path), sums, s.Summaries())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Small buffers put line ends, line starts and record kinds on
		// every side of a read's edge.
		for _, size := range []int{1, 5, 19, 64, 4093} {
			_, _, sums, err := readSummaries(iotest.HalfReader(bytes.NewReader(data)), make([]byte, size), path, nil)
			if err != nil || !reflect.DeepEqual(sums, s.Summaries()) {
				t.Errorf("%s, buffer of %d: readSummaries = %+v, %v; Load = %+v", filepath.Base(path), size, sums, err, s.Summaries())
			}
		}
	}
}

// TestReadSummariesNotRegular: a FIFO or a directory named like a
// transcript is refused without being read, and a FIFO does not block.
func TestReadSummariesNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.jsonl")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, sub} {
		_, _, err := ReadSummaries(path)
		if !errors.Is(err, safeopen.ErrNotRegular) {
			t.Errorf("%s: %v, want %v", filepath.Base(path), err, safeopen.ErrNotRegular)
		}
		if _, err := PeekMeta(path); !errors.Is(err, safeopen.ErrNotRegular) {
			t.Errorf("PeekMeta of %s: %v, want %v", filepath.Base(path), err, safeopen.ErrNotRegular)
		}
		if _, err := Load(path); !errors.Is(err, safeopen.ErrNotRegular) {
			t.Errorf("Load of %s: %v, want %v", filepath.Base(path), err, safeopen.ErrNotRegular)
		}
	}
}

// TestReadDirSummariesMatchesList: the one pass over a directory finds
// what List and then ReadSummaries on each listed session find, in the
// same order, and leaves out what List leaves out.
func TestReadDirSummariesMatchesList(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	day := time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC)
	sum := `{"record":"summary","turns":1}` + "\n"
	for i, content := range []string{
		metaLine("20260805T091500-00000001", day, "one") + sum + sum,
		metaLine("20260805T091500-00000002", day, "same time, other id"),
		metaLine("20260806T091500-00000003", day.Add(24*time.Hour), "newer") + strings.Repeat(`{"record":"message"}`+"\n", 20000) + sum,
		metaLine("20260701T091500-00000004", day.AddDate(0, -1, 0), "older, torn") + `{"record":"summary","tur`,
		`{"record":"message"}` + "\n",
		"",
		`{"record":"meta","id":"` + strings.Repeat("x", maxHeader) + `"}` + "\n" + sum,
		`{"record":"meta","id":"` + strings.Repeat("x", 2*summaryBufSize) + `"}` + "\n" + sum,
	} {
		writeFile(t, dir, fmt.Sprintf("%d.jsonl", i), content)
	}
	writeFile(t, dir, "notes.txt", "not a transcript")
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "dir.jsonl"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		keep     func(transcript.Meta) bool
		sessions int
	}{
		{"all", nil, 4},
		{"since day 5", func(m transcript.Meta) bool { return !m.CreatedAt.Before(day) }, 3},
	} {
		keep := tc.keep
		t.Run(tc.name, func(t *testing.T) {
			st := &Store{Dir: dir}
			l, err := st.List()
			if err != nil {
				t.Fatal(err)
			}
			var want []Summarized
			for _, info := range l.Sessions {
				if keep != nil && !keep(info.Meta) {
					continue
				}
				_, sums, err := ReadSummaries(info.Ref.Path())
				want = append(want, Summarized{Info: info, Summaries: sums, Err: err})
			}
			got, skipped, err := st.Summaries(keep)
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != len(l.NotSessions) {
				t.Errorf("skipped %v, List skipped %v", skipped, l.NotSessions)
			}
			if len(got) != tc.sessions {
				t.Errorf("%d sessions, want %d", len(got), tc.sessions)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Summaries:\n%+v\nList and ReadSummaries:\n%+v", got, want)
			}
		})
	}
	if got, _, err := (&Store{Dir: filepath.Join(dir, "missing")}).Summaries(nil); got != nil || err != nil {
		t.Errorf("missing directory: %v, %v", got, err)
	}
}
