package root_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestConcurrentResume starts eight resumes of one session at once through
// the real binary. Whichever takes the session first is held inside a tool
// call until every other has exited, so the outcome does not depend on
// timing: exactly one run succeeds, the seven others exit 1 at once with
// one line naming the holder, and the transcript is one valid conversation.
func TestConcurrentResume(t *testing.T) {
	t.Parallel()
	const n = 8
	dir := t.TempDir()
	home := filepath.Join(dir, "home")
	ws := filepath.Join(dir, "ws")
	gate := filepath.Join(dir, "gate")
	if err := os.MkdirAll(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOME="+home, "MECHA_HOME="+filepath.Join(home, ".mecha"),
		"MECHA_SESSION_DIR="+filepath.Join(home, ".mecha", "sessions"), "NO_COLOR=1", "TZ=UTC")
	mecha := func(args ...string) *exec.Cmd {
		cmd := exec.Command("mecha", args...)
		cmd.Dir, cmd.Env = ws, env
		return cmd
	}
	if out, err := mecha("run", "start").CombinedOutput(); err != nil {
		t.Fatalf("mecha run: %v\n%s", err, out)
	}
	store := &session.Store{Dir: filepath.Join(home, ".mecha", "sessions")}
	l, err := store.List()
	if err != nil || len(l.Sessions) != 1 {
		t.Fatalf("list: %v %+v", err, l)
	}
	id, ref := l.Sessions[0].Meta.ID, l.Sessions[0].Ref

	// The winner's first turn waits in the shell tool for the gate file
	// (for at most a minute), the second answers.
	wait := `i=0; while [ ! -e ` + gate + ` ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; echo opened`
	script := `{"turns":[{"tool_calls":[{"name":"shell","input":{"command":` + quote(wait) + `}}]},{"text":"Done."}]}`
	scriptPath := filepath.Join(dir, "gate.json")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}

	got := resumeAll(t, n, func(i int) *exec.Cmd {
		return mecha("run", "-p", "mock", "--mock-script", scriptPath, "--yes", "--resume", id, "resume "+string(rune('A'+i)))
	}, gate)
	busy := regexp.MustCompile(`^mecha: session: ` + id + ` is in use by process [0-9]+ \(one writer at a time: wait for it to finish\)\n$`)
	ok := 0
	for _, r := range got {
		switch {
		case r.code == 0:
			ok++
		case r.code == 1 && busy.MatchString(r.stderr):
		default:
			t.Errorf("resume %d exited %d:\n%s", r.i, r.code, r.stderr)
		}
	}
	if ok != 1 {
		t.Errorf("%d resumes succeeded, want exactly 1", ok)
	}

	checkOneConversation(t, store, ref)
}

// checkOneConversation holds the transcript after the concurrent resumes
// to one valid conversation: the first run, then the one resume.
func checkOneConversation(t *testing.T, store *session.Store, ref session.Ref) {
	t.Helper()
	s, err := store.Load(ref)
	if err != nil {
		t.Fatal(err)
	}
	if s.Skipped != 0 || len(s.Configs()) != 2 {
		t.Errorf("skipped %d lines, %d attaches; want 0 and 2", s.Skipped, len(s.Configs()))
	}
	var roles []string
	prompts := 0
	for _, m := range s.Messages() {
		roles = append(roles, m.Role)
		if m.Role == transcript.RoleUser && strings.HasPrefix(transcript.TextOf(m.Content), "resume ") {
			prompts++
		}
	}
	for i := 1; i < len(roles); i++ {
		if roles[i] == roles[i-1] {
			t.Errorf("messages %d and %d are both %s: %v", i-1, i, roles[i], roles)
		}
	}
	if prompts != 1 {
		t.Errorf("%d resume prompts in the transcript, want 1", prompts)
	}
	v, err := sessionview.Build(ref.Path(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range v.Items {
		if r, ok := it.(*sessionview.Reply); ok {
			for _, c := range r.Calls {
				if c.Result == nil {
					t.Errorf("call %s of line %d has no result", c.ID, r.Line())
				}
			}
		}
	}
	if v.Totals.Runs != 2 {
		t.Errorf("%d runs finished, want 2", v.Totals.Runs)
	}
}

func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch c {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	b.WriteByte('"')
	return b.String()
}

type resumeResult struct {
	i      int
	code   int
	stderr string
}

// resumeAll starts n commands at once and collects their exits: all but
// one first, then, once the gate file is written, the holder's.
func resumeAll(t *testing.T, n int, command func(i int) *exec.Cmd, gate string) []resumeResult {
	t.Helper()
	results := make(chan resumeResult, n)
	for i := range n {
		cmd := command(i)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() {
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			results <- resumeResult{i, code, stderr.String()}
		}()
	}
	var got []resumeResult
	collect := func(k int) {
		// A bound on a hang, not a measure of speed.
		deadline := time.After(3 * time.Minute)
		for len(got) < k {
			select {
			case r := <-results:
				got = append(got, r)
			case <-deadline:
				t.Fatalf("only %d of %d resumes exited", len(got), k)
			}
		}
	}
	collect(n - 1) // every run but the holder
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	collect(n)
	return got
}
