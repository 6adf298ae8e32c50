package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/transcript"
)

var fixedNow = func() time.Time { return time.Date(2026, 8, 5, 9, 15, 0, 0, time.UTC) }

func newSession(t *testing.T, dir string) *Writer {
	t.Helper()
	s := &Store{Dir: dir, Now: fixedNow}
	w, err := s.Create(transcript.Meta{Provider: "mock", Model: "mock-1", Workspace: "/w", Title: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestCreateAppendLoad(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "sessions")
	w := newSession(t, dir)
	if !ValidID(w.ID()) || !strings.HasPrefix(w.ID(), "20260805T091500-") {
		t.Fatalf("id = %q", w.ID())
	}
	recs := []transcript.Record{
		&transcript.Config{Provider: "mock", Model: "mock-1", Tools: []string{"fs_list"}},
		numbered("a", 0, 10),
		&transcript.Taint{Private: true},
		&transcript.Summary{Usage: transcript.Usage{InputTokens: 5}, Turns: 1},
	}
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if s.Meta.ID != w.ID() || s.Meta.Format != transcript.FormatVersion || !s.Meta.CreatedAt.Equal(fixedNow()) {
		t.Errorf("meta = %+v", s.Meta)
	}
	if len(s.Records) != 4 || s.Skipped != 0 {
		t.Fatalf("records = %d, skipped = %d", len(s.Records), s.Skipped)
	}
	if u, turns := s.UsageTotals(); u.InputTokens != 5 || turns != 1 {
		t.Errorf("usage = %+v, %d", u, turns)
	}
}

func TestSameSecondIDsAreUnique(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	seen := map[string]bool{}
	for range 200 {
		w := newSession(t, dir)
		if seen[w.ID()] {
			t.Fatalf("duplicate id %s", w.ID())
		}
		seen[w.ID()] = true
		w.Close()
	}
	// A random source that repeats itself still yields distinct files.
	s := &Store{Dir: dir, Now: fixedNow, Rand: &cycle{}}
	a, err := s.Create(transcript.Meta{Title: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Create(transcript.Meta{Title: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.ID() == b.ID() {
		t.Fatalf("same id twice: %s", a.ID())
	}
}

// cycle yields 0,0,0,0 then 0,0,0,1 ...: a collision first, then progress.
type cycle struct{ n byte }

func (c *cycle) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 0
	}
	p[len(p)-1] = c.n / 2
	c.n++
	return len(p), nil
}

// Not parallel: the umask is process-wide.
func TestPermissionsIgnoreUmask(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "home", "sessions")
	w := newSession(t, dir)
	w.Close()
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Dir(dir): 0o700, w.Path(): 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.Mode().Perm(); got != want {
			t.Errorf("%s mode %o, want %o", path, got, want)
		}
	}
}

func TestConcurrentProcessesNeverInterleave(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns 8 processes")
	}
	t.Parallel()
	w := newSession(t, t.TempDir())
	w.Close()
	const writers, each = 8, 1000
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "MECHA_SESSION_TEST_CHILD=append", "MECHA_PATH="+w.Path(),
				fmt.Sprintf("MECHA_WRITER=w%d", i), fmt.Sprintf("MECHA_COUNT=%d", each))
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("writer %d: %v: %s", i, err, out)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	s, err := Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if s.Skipped != 0 {
		t.Fatalf("%d corrupt lines, first: %+v", s.Skipped, s.SkippedLines)
	}
	next := map[string]int{}
	for _, m := range s.Messages() {
		name, n, ok := parseNumbered(m)
		if !ok || n != next[name] {
			t.Fatalf("record out of order or damaged: %s:%d (want %d)", name, n, next[name])
		}
		next[name]++
	}
	for i := range writers {
		if got := next[fmt.Sprintf("w%d", i)]; got != each {
			t.Errorf("writer %d: %d records, want %d", i, got, each)
		}
	}
}

func TestKilledMidWriteKeepsEverythingBefore(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	t.Parallel()
	w := newSession(t, t.TempDir())
	w.Close()
	for round := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MECHA_SESSION_TEST_CHILD=append-forever", "MECHA_PATH="+w.Path())
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(30+round*20) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()

		s, err := Load(w.Path())
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		t.Logf("round %d: %d records kept, %d torn lines skipped", round, len(s.Records), s.Skipped)
		if s.Skipped > round+1 {
			t.Fatalf("round %d: %d skipped lines: %+v", round, s.Skipped, s.SkippedLines)
		}
		want := 0
		for _, m := range s.Messages() {
			name, n, ok := parseNumbered(m)
			if !ok || len(m.Content[0].Text) < 1<<20 {
				t.Fatalf("round %d: damaged record kept", round)
			}
			if name == "k" && n == 0 {
				want = 0 // a new round starts numbering again
			}
			if n != want {
				t.Fatalf("round %d: record %d where %d was expected", round, n, want)
			}
			want++
		}
	}
}

func TestAppendAfterTornTailStartsANewLine(t *testing.T) {
	t.Parallel()
	w := newSession(t, t.TempDir())
	w.Append(numbered("a", 0, 10))
	w.Close()
	f, err := os.OpenFile(w.Path(), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"record":"message","role":"assistant","content":[{"type":"te`)
	f.Close()

	w2, err := OpenWriter(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Append(numbered("b", 0, 10)); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	s, err := Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Messages()) != 2 || s.Skipped != 1 || s.SkippedLines[0].Line != 3 || s.SkippedLines[0].Torn {
		t.Fatalf("messages %d, skipped %+v", len(s.Messages()), s.SkippedLines)
	}
}

func TestFailedWriteIsRolledBackAndRecordingStops(t *testing.T) {
	t.Parallel()
	w := newSession(t, t.TempDir())
	w.Close()
	before, _ := os.ReadFile(w.Path())
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "MECHA_SESSION_TEST_CHILD=append-past-limit", "MECHA_PATH="+w.Path())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var res map[string]string
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(res["first"], "file too large") || !strings.Contains(res["first"], "recording of session") {
		t.Errorf("first error = %q", res["first"])
	}
	if res["second"] != res["first"] {
		t.Errorf("a later append must repeat the failure, got %q", res["second"])
	}
	after, _ := os.ReadFile(w.Path())
	// The header and the small record are there; the failed record left nothing.
	if !bytes.HasPrefix(after, before) || !bytes.HasSuffix(after, []byte("\n")) || bytes.Count(after, []byte("\n")) != 2 {
		t.Fatalf("file after failed write:\n%s", after)
	}
}

func TestLoadEveryTruncation(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join(v1Dir, "basic.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	headerEnd := bytes.IndexByte(data, '\n')
	full, err := read(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for cut := headerEnd + 1; cut <= len(data); cut++ {
		s, err := read(bytes.NewReader(data[:cut]))
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		complete := bytes.Count(data[headerEnd+1:cut], []byte("\n"))
		if len(s.Records) < complete || len(s.Records) > complete+1 || s.Skipped > 1 {
			t.Fatalf("cut at %d: %d records, %d skipped, %d complete lines", cut, len(s.Records), s.Skipped, complete)
		}
		if s.Skipped == 1 && !s.SkippedLines[0].Torn {
			t.Fatalf("cut at %d: a torn tail must be marked torn", cut)
		}
		for i, r := range s.Records {
			a, _ := transcript.Encode(r)
			b, _ := transcript.Encode(full.Records[i])
			if !bytes.Equal(a, b) {
				t.Fatalf("cut at %d: record %d differs", cut, i)
			}
		}
	}
	for _, bad := range []string{"", "\n", "garbage\n", `{"record":"message","role":"user","content":[]}` + "\n"} {
		if _, err := read(strings.NewReader(bad)); !errors.Is(err, ErrNotSession) {
			t.Errorf("read(%q) = %v, want ErrNotSession", bad, err)
		}
	}
}

func TestLoadLongLines(t *testing.T) {
	t.Parallel()
	w := newSession(t, t.TempDir())
	big := numbered("big", 0, 3<<20)
	w.Append(numbered("a", 0, 10), big, numbered("a", 1, 10), &transcript.Summary{Turns: 2})
	w.Close()
	s, err := Load(w.Path())
	if err != nil || len(s.Records) != 4 || s.Skipped != 0 {
		t.Fatalf("%v, %d records, %d skipped", err, len(s.Records), s.Skipped)
	}
	if got := s.Messages()[1].Content[0].Text; got != big.Content[0].Text {
		t.Errorf("big record damaged: %d bytes", len(got))
	}
	_, sums, err := ReadSummaries(w.Path())
	if err != nil || len(sums) != 1 || sums[0].Turns != 2 {
		t.Fatalf("ReadSummaries = %v, %v", sums, err)
	}
}

var _ io.Reader = (*cycle)(nil)

func TestBackgroundSync(t *testing.T) {
	t.Parallel()
	st := &Store{Dir: filepath.Join(t.TempDir(), "sessions"), Now: fixedNow, BackgroundSync: true}
	w, err := st.Create(transcript.Meta{Title: "bg"})
	if err != nil {
		t.Fatal(err)
	}
	w.SyncInBackground()
	w.SyncInBackground() // a second call changes nothing
	for i := range 200 {
		if err := w.Append(numbered("bg", i, 500)); err != nil {
			t.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	s, err := Load(w.Path())
	if err != nil || len(s.Messages()) != 200 || s.Skipped != 0 {
		t.Fatalf("%v: %d messages, %d skipped", err, len(s.Messages()), s.Skipped)
	}
	if err := w.Append(numbered("late", 0, 1)); err == nil {
		t.Error("append after Close succeeded")
	}
}
