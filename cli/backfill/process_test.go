package backfill

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/sessionindex"
)

// fakeEnv makes the test binary, started by Starter in place of mecha,
// write what it was started with to the file named there and exit (see
// TestMain).
const fakeEnv = "BACKFILL_TEST_FAKE_MECHA"

func TestMain(m *testing.M) {
	if out := os.Getenv(fakeEnv); out != "" {
		os.Exit(fakeMecha(out))
	}
	os.Exit(m.Run())
}

// fakeMecha writes its arguments, store, working directory, pid and
// session id to out (whole, renamed into place), and a line to each of
// its standard outputs.
func fakeMecha(out string) int {
	wd, _ := os.Getwd()
	sid, _, errno := syscall.RawSyscall(syscall.SYS_GETSID, 0, 0, 0)
	if errno != 0 {
		return 3
	}
	text := fmt.Sprintf("args=%s\nstore=%s\ncwd=%s\npid=%d\nsid=%d\n", strings.Join(os.Args, " "), os.Getenv("MECHA_SESSION_DIR"), wd, os.Getpid(), sid)
	if err := os.WriteFile(out+".tmp", []byte(text), 0o600); err != nil || os.Rename(out+".tmp", out) != nil {
		return 2
	}
	fmt.Println("fake mecha's standard output")
	fmt.Fprintln(os.Stderr, "fake mecha's standard error")
	return 0
}

// fake returns a Starter for the store in dir that starts the test
// binary as mecha (writing what it was started with to out, see
// fakeMecha, with env added to its environment), and what it says.
func fake(t *testing.T, dir, out string, env ...string) (func(int, int64) bool, *strings.Builder) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	return Starter(dir, func() (string, error) { return self, nil }, func() []string { return append([]string{fakeEnv + "=" + out}, env...) }, time.Now, &stderr), &stderr
}

// TestStartedProcess: what Starter starts is "mecha sessions reindex
// --background" for this store, in a session of its own (no terminal
// reaches it), from /, its output in the log, and the line names its pid.
// The test binary stands in for mecha.
func TestStartedProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the fake's session id with getsid(2) on Linux")
	}
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "started")
	start, stderr := fake(t, dir, out, "MECHA_SESSION_DIR=/somewhere/else")
	if !start(10000, 1<<30) {
		t.Fatal("not started")
	}
	m := regexp.MustCompile(`^mecha: indexing 10000 sessions \(1024\.0 MB\) in the background \(process ([0-9]+)\), this once; until it ends, commands read the transcripts\n$`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("said %q", stderr.String())
	}
	got := waitFile(t, out)
	want := map[string]string{
		"args":  "mecha sessions reindex --background",
		"store": dir, // the store's, over any the environment had
		"cwd":   "/",
		"pid":   m[1],
		"sid":   m[1], // the leader of a session of its own
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	log := filepath.Join(filepath.Dir(lockPath(dir)), Log)
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(log)
		if strings.Contains(string(b), "fake mecha's standard output\n") && strings.Contains(string(b), "fake mecha's standard error\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the log %s holds %q, not both of the process's outputs", log, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitFile waits for the fake's file and returns its fields.
func waitFile(t *testing.T, path string) map[string]string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		f, err := os.Open(path)
		if err == nil {
			defer f.Close()
			fields := map[string]string{}
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if k, v, ok := strings.Cut(sc.Text(), "="); ok {
					fields[k] = v
				}
			}
			return fields
		}
		if time.Now().After(deadline) {
			t.Fatalf("the started process wrote no %s", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestForget: with no log, Forget has nothing to do; a log it cannot
// remove is an error.
func TestForget(t *testing.T) {
	if err := Forget(t.TempDir()); err != nil {
		t.Errorf("Forget with no index directory: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".index"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Forget(dir); err == nil {
		t.Error("Forget where .index is a file said nothing")
	}
}

// TestRetryAfterBoundary: the delay ends at RetryAfter exactly, by the
// command's clock.
func TestRetryAfterBoundary(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after  time.Duration
		starts bool
	}{{RetryAfter - time.Second, false}, {RetryAfter, true}} {
		dir := t.TempDir()
		log := filepath.Join(filepath.Dir(lockPath(dir)), Log)
		if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(log, []byte("mecha: background indexing failed: no space left on device\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(log)
		if err != nil {
			t.Fatal(err)
		}
		started := false
		var stderr strings.Builder
		now := func() time.Time { return st.ModTime().Add(tc.after) }
		out := filepath.Join(t.TempDir(), "started")
		Starter(dir, func() (string, error) { started = true; return self, nil }, func() []string { return []string{fakeEnv + "=" + out} }, now, &stderr)(10000, 1<<30)
		if started != tc.starts {
			t.Errorf("%v after the failure: started %v, said %q", tc.after, started, stderr.String())
		}
		if started {
			waitFile(t, out)
		}
	}
}

// TestNoDescriptorLeft: neither a start nor a command that backs off
// keeps a file open.
func TestNoDescriptorLeft(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd to count descriptors")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	count := func() int {
		es, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	dir := t.TempDir()
	log := filepath.Join(filepath.Dir(lockPath(dir)), Log)
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		t.Fatal(err)
	}
	before := count()
	for i := range 20 {
		// Failed just now: backs off, reading the log.
		if err := os.WriteFile(log, []byte("mecha: background indexing failed: no space left on device\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		var stderr strings.Builder
		Starter(dir, func() (string, error) { return self, nil }, func() []string { return nil }, time.Now, &stderr)(10000, 1<<30)
		if !strings.Contains(stderr.String(), "is not being built") {
			t.Fatalf("did not back off: %q", stderr.String())
		}
		// Started: the log opened for the process.
		out := filepath.Join(t.TempDir(), "started"+strconv.Itoa(i))
		os.Remove(log)
		start, _ := fake(t, dir, out)
		start(10000, 1<<30)
		waitFile(t, out)
	}
	if after := count(); after > before+2 {
		t.Errorf("%d descriptors open before, %d after 40 commands", before, after)
	}
}

// TestNoZombie: a process that starts background indexings and runs on
// (a chat) reaps each once it ends.
func TestNoZombie(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads the process's state in /proc")
	}
	out := filepath.Join(t.TempDir(), "started")
	start, _ := fake(t, t.TempDir(), out)
	start(10000, 1<<30)
	pid := waitFile(t, out)["pid"]
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return // reaped
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %s is still there, 10 s after it ended: %s", pid, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRun: the background process indexes the store and says how many
// sessions it lists; a second one while it holds the lock does nothing
// (TestBackfillWhileOneRuns).
func TestRun(t *testing.T) {
	dir := t.TempDir()
	for i := range 3 {
		id := fmt.Sprintf("20260101T00000%d-0000000%d", i, i)
		rec := fmt.Sprintf(`{"record":"meta","format":1,"id":%q,"created_at":"2026-01-01T00:00:0%dZ","provider":"mock","model":"m","workspace":"/w","title":"t"}`+"\n"+
			`{"record":"message","role":"user","content":[{"type":"text","text":"find the zebracorn"}]}`+"\n", id, i)
		if err := os.WriteFile(filepath.Join(dir, id+".jsonl"), []byte(rec), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, ran, err := Run(dir)
	if err != nil || !ran || n != 3 {
		t.Fatalf("Run: %d sessions, ran %v, %v", n, ran, err)
	}
	if _, err := os.Stat(filepath.Join(dir, sessionindex.Name)); err != nil {
		t.Errorf("no index after Run: %v", err)
	}
}
