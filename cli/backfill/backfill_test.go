package backfill

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
)

// TestBackfillWhileOneRuns: while a background indexing holds the lock,
// a command that finds the indexing to do starts no other one: it says so
// once, naming the process, and reads the transcripts. Once the lock is
// free it starts one (here it cannot: mecha's executable is unknown to
// the test, so it declines and the command indexes itself).
func TestBackfillWhileOneRuns(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Dir(lockPath(dir)), 0o700); err != nil {
		t.Fatal(err)
	}
	// The lock as the background process holds it (Run).
	l, err := session.Acquire(lockPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	started := 0
	start := Starter(dir, func() (string, error) { started++; return "", errors.New("no executable in this test") }, func() []string { return nil }, time.Now, &stderr)
	if !start(10000, 1<<30) {
		t.Fatal("with the lock held, the command indexes itself")
	}
	if started != 0 {
		t.Errorf("another background indexing was started")
	}
	want := fmt.Sprintf("mecha: the session index is being built in the background (process %d); reading the transcripts meanwhile\n", os.Getpid())
	if got := stderr.String(); got != want {
		t.Errorf("said %q, want %q", got, want)
	}
	if n, ran, err := Run(dir); ran || err != nil || n != 0 {
		t.Errorf("a second Run while one holds the lock: ran %v, %v", ran, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	// The next command (the answer holds for the rest of this one).
	stderr.Reset()
	start = Starter(dir, func() (string, error) { started++; return "", errors.New("no executable in this test") }, func() []string { return nil }, time.Now, &stderr)
	if start(10000, 1<<30) {
		t.Error("with the lock free and no executable, the command reads the transcripts")
	}
	if started != 1 || stderr.Len() != 0 {
		t.Errorf("with the lock free: %d starts, said %q", started, stderr.String())
	}
	if _, running, err := Running(dir); err != nil || running {
		t.Errorf("Running after the release: %v, %v", running, err)
	}
	if strings.Contains(stderr.String(), "being built") {
		t.Error("said it was being built once it was not")
	}
}

// TestBackfillSaysTheLastOneFailed: a background indexing that did not
// finish is not started again silently: the next one's line says how the
// last one ended (its error, or that it stopped part way), and one that
// finished is not mentioned.
func TestBackfillSaysTheLastOneFailed(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to start in place of mecha")
	}
	for _, tc := range []struct{ log, want string }{
		{"", ""},
		{"mecha: indexing 10000 sessions (80.7 MB) for listing and search: this once, then only what changes\nindexed 10000 sessions in /s\n", ""},
		{"mecha: indexing 10000 sessions (80.7 MB) for listing and search: this once, then only what changes\n", "; the last one did not finish: it was stopped part way"},
		{"mecha: the listing snapshot was damaged; rebuilding it\n", "; the last one did not finish: the listing snapshot was damaged; rebuilding it"},
		// A failure two hours ago: started again, and said.
		{"mecha: background indexing failed: sessionindex: disk I/O error\n", "; the last one did not finish: sessionindex: disk I/O error"},
	} {
		dir := t.TempDir()
		idx := filepath.Dir(lockPath(dir))
		if err := os.MkdirAll(idx, 0o700); err != nil {
			t.Fatal(err)
		}
		if tc.log != "" {
			if err := os.WriteFile(filepath.Join(idx, Log), []byte(tc.log), 0o600); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-2 * time.Hour)
			if err := os.Chtimes(filepath.Join(idx, Log), old, old); err != nil {
				t.Fatal(err)
			}
		}
		var stderr bytes.Buffer
		if !Starter(dir, func() (string, error) { return truePath, nil }, func() []string { return nil }, time.Now, &stderr)(10000, 1<<30) {
			t.Fatal("the start failed")
		}
		line := strings.TrimSuffix(stderr.String(), "\n")
		if !strings.HasPrefix(line, "mecha: indexing 10000 sessions (1024.0 MB) in the background (process ") || strings.Contains(line, "\n") {
			t.Errorf("said %q", stderr.String())
		}
		if got := line[strings.Index(line, "read the transcripts")+len("read the transcripts"):]; got != tc.want {
			t.Errorf("after a log of %q, said %q, want %q at the end", tc.log, got, tc.want)
		}
	}
}

// TestBackfillBacksOff: after a background indexing failed, no other is
// started for RetryAfter, as git's automatic gc after a failure: each
// command says why in one line and reads the transcripts. One stopped
// part way is started again at once, and one failed longer ago too (see
// TestBackfillSaysTheLastOneFailed). Forget (what sessions reindex calls
// once it built the index) lifts the delay.
func TestBackfillBacksOff(t *testing.T) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to start in place of mecha")
	}
	for _, tc := range []struct {
		name, log string
		ago       time.Duration
		starts    bool
	}{
		{"failed just now", "mecha: indexing 10000 sessions\nmecha: background indexing failed: open x: no space left on device\n", time.Minute, false},
		{"failed within the hour", "mecha: background indexing failed: open x: no space left on device\n", RetryAfter - time.Minute, false},
		{"failed over an hour ago", "mecha: background indexing failed: open x: no space left on device\n", RetryAfter + time.Minute, true},
		{"stopped part way just now", "mecha: indexing 10000 sessions\n", time.Minute, true},
		{"killed after a warning just now", "mecha: the listing snapshot was damaged; rebuilding it\n", time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			log := filepath.Join(filepath.Dir(lockPath(dir)), Log)
			if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(log, []byte(tc.log), 0o600); err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-tc.ago)
			if err := os.Chtimes(log, at, at); err != nil {
				t.Fatal(err)
			}
			started := 0
			var stderr bytes.Buffer
			start := Starter(dir, func() (string, error) { started++; return truePath, nil }, func() []string { return nil }, time.Now, &stderr)
			// A command that reads the store twice (a search handed off
			// lists it to scan it) is answered the same, and told once.
			if !start(10000, 1<<30) || !start(10000, 1<<30) {
				t.Fatal("the command indexes in place")
			}
			said := strings.TrimSuffix(stderr.String(), "\n")
			if strings.Contains(said, "\n") {
				t.Errorf("said more than one line: %q", stderr.String())
			}
			if tc.starts {
				if started != 1 || !strings.Contains(said, "in the background (process ") {
					t.Errorf("not started again: %d starts, said %q", started, said)
				}
				return
			}
			want := "mecha: the session index is not being built: the background indexing at " + at.Format("15:04") +
				" failed (open x: no space left on device); reading the transcripts (another is tried after " + at.Add(RetryAfter).Format("15:04") + "; mecha sessions reindex builds it now)"
			if started != 0 || said != want {
				t.Errorf("%d starts, said\n%q\nwant\n%q", started, said, want)
			}
			if err := Forget(dir); err != nil {
				t.Fatal(err)
			}
			stderr.Reset()
			start = Starter(dir, func() (string, error) { started++; return truePath, nil }, func() []string { return nil }, time.Now, &stderr)
			if !start(10000, 1<<30) || started != 1 {
				t.Errorf("after Forget: %d starts, said %q", started, stderr.String())
			}
			if err := Forget(dir); err != nil {
				t.Errorf("Forget with no log: %v", err)
			}
		})
	}
}
