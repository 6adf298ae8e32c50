//go:build linux

package root

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// ptyScreen is a command on a pseudo-terminal, what it wrote there, and
// the screen a terminal would show for it: the chat redraws only the cells
// that change, so a line of text may arrive in pieces, wherever the
// cursor is sent; only the screen holds it whole.
type ptyScreen struct {
	t      *testing.T
	ptmx   *os.File
	mu     sync.Mutex
	buf    bytes.Buffer
	screen *vt.Emulator
	seen   int
	done   chan int
	err    bytes.Buffer
}

// onPTY runs "mecha ARGS" on a fresh pseudo-terminal, as a person would.
func onPTY(t *testing.T, vars map[string]string, args ...string) *ptyScreen {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	s := &ptyScreen{t: t, ptmx: ptmx, done: make(chan int, 1), screen: vt.NewEmulator(100, 30)}
	// The emulator answers the program's queries through its reader; a
	// terminal's answers are not needed here, so they are dropped (unread,
	// they would block its writes).
	go io.Copy(io.Discard, s.screen)
	env := &cmdkit.Env{In: tty, Out: tty, Err: &s.err, InTTY: true, OutTTY: true, Vars: func(k string) string { return vars[k] }}
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			s.mu.Lock()
			s.buf.Write(buf[:n])
			s.screen.Write(buf[:n])
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	go func() { s.done <- Run(context.Background(), env, args) }()
	return s
}

// waitFor waits until the terminal shows want: a control sequence (one
// starting with ESC) among the bytes written after what was last waited
// for, any other text on the screen (the time limit only guards against a
// hang).
func (s *ptyScreen) waitFor(want string) {
	s.t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		b := s.buf.Bytes()
		found := false
		if strings.HasPrefix(want, "\x1b") {
			if i := bytes.Index(b[s.seen:], []byte(want)); i >= 0 {
				s.seen += i + len(want)
				found = true
			}
		} else {
			found = strings.Contains(s.screen.String(), want)
		}
		screen := s.screen.String()
		s.mu.Unlock()
		if found {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("the terminal never showed %q; the screen:\n%s\nthe last bytes: %q", want, screen, b[max(0, len(b)-2000):])
		}
	}
}

// quit presses Ctrl-C twice and returns the exit code.
func (s *ptyScreen) quit() int {
	s.t.Helper()
	s.ptmx.WriteString("\x03")
	s.waitFor("press Ctrl-C again")
	s.ptmx.WriteString("\x03")
	select {
	case code := <-s.done:
		return code
	case <-time.After(60 * time.Second):
		s.t.Fatal("the chat did not end after two Ctrl-C")
	}
	return -1
}

// TestChatOnATerminal: "mecha" alone on a terminal opens the chat (raw
// mode, the alternate screen), a prompt is answered and recorded, two
// Ctrl-C end it saying the session; "mecha chat -c" then continues that
// session, its conversation shown again.
func TestChatOnATerminal(t *testing.T) {
	srv := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{{Text: "Hello from the model."}, {Text: "Still here."}}}, fakellm.Options{})
	home, ws := t.TempDir(), t.TempDir()
	t.Chdir(ws)
	vars := map[string]string{"MECHA_HOME": home, "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "test-key-of-the-chat",
		"TERM": "xterm-256color"}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("default_provider = \"anthropic\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := onPTY(t, vars)
	s.waitFor("\x1b[?1049h") // the alternate screen
	s.waitFor("ready · ")
	s.ptmx.WriteString("hi there\r")
	s.waitFor("Hello from the model.")
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha exited %d: %s", code, s.err.String())
	}
	l, err := session.List(filepath.Join(home, "sessions"))
	if err != nil || len(l.Sessions) != 1 {
		t.Fatalf("sessions %+v, %v", l, err)
	}
	id := l.Sessions[0].Meta.ID
	if want := "session: " + id + " (mecha chat --resume " + id + ")\n"; s.err.String() != want {
		t.Errorf("stderr %q, want %q", s.err.String(), want)
	}
	if _, err := os.Stat(filepath.Join(home, "sessions", id+".lock")); err == nil {
		t.Error("the session's lock is left behind")
	}

	s = onPTY(t, vars, "chat", "-c", "--sandbox", "none")
	s.waitFor("hi there")
	s.waitFor("resumed " + id)
	s.ptmx.WriteString("more\r")
	s.waitFor("Still here.")
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha chat -c exited %d: %s", code, s.err.String())
	}
	got, err := session.Load(filepath.Join(home, "sessions", id+".jsonl"))
	if err != nil || len(got.Configs()) != 2 || len(got.Messages()) != 4 {
		t.Errorf("after -c the session has %d attaches and %d messages (%v), want 2 and 4", len(got.Configs()), len(got.Messages()), err)
	}
}
