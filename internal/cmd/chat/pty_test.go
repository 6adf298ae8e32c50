//go:build linux

package chat

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mecha-agent/mecha/internal/cmd/run"
	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/internal/fakellm"
	"github.com/mecha-agent/mecha/session"
)

// screenLog collects what the program wrote to the terminal.
type screenLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (s *screenLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.Write(p)
}

func (s *screenLog) has(want string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Contains(s.buf.Bytes(), []byte(want))
}

// TestChatOnATerminal runs "mecha" alone the way a person does, on a
// pseudo-terminal: raw mode, the alternate screen, a prompt typed and
// answered, and the two Ctrl-C that end it with the session said on the
// error stream.
func TestChatOnATerminal(t *testing.T) {
	srv := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{{Text: "Hello from the model."}}}, fakellm.Options{})
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if err := pty.Setsize(ptmx, &pty.Winsize{Rows: 30, Cols: 100}); err != nil {
		t.Fatal(err)
	}
	home, ws := t.TempDir(), t.TempDir()
	vars := map[string]string{"MECHA_HOME": home, "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "test-key-of-the-chat",
		"TERM": "xterm-256color"}
	var stderr bytes.Buffer
	env := &cmdutil.Env{In: tty, Out: tty, Err: &stderr, InTTY: true, OutTTY: true, Getenv: func(k string) string { return vars[k] }}
	opts := run.NewOptions(env)
	opts.Provider, opts.Workspace, opts.Sandbox.Mode = "anthropic", ws, "none"
	given := func(name string) bool { return name == "provider" || name == "workspace" }
	opts.Given = given
	var screen screenLog
	go io.Copy(&screen, ptmx)
	done := make(chan error, 1)
	go func() { done <- chatRun(context.Background(), &Options{Env: env, Run: opts, Given: given}) }()
	waitScreen := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(hangGuard); !screen.has(want); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				screen.mu.Lock()
				b := screen.buf.Bytes()
				t.Fatalf("the terminal never showed %q; it shows %q", want, b[max(0, len(b)-3000):])
			}
		}
	}
	waitScreen("\x1b[?1049h") // the alternate screen
	waitScreen("ready · ")
	ptmx.WriteString("hi there\r")
	waitScreen("Hello from the") // glamour styles each word
	ptmx.WriteString("\x03")
	waitScreen("press Ctrl-C again")
	ptmx.WriteString("\x03")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("chat: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the chat did not end after two Ctrl-C")
	}
	l, err := session.List(filepath.Join(home, "sessions"))
	if err != nil || len(l.Sessions) != 1 {
		t.Fatalf("sessions %+v, %v", l, err)
	}
	id := l.Sessions[0].Meta.ID
	if want := "session: " + id + " (mecha chat --resume " + id + ")\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
	if _, err := os.Stat(filepath.Join(home, "sessions", id+".lock")); err == nil {
		t.Error("the session's lock is left behind")
	}
}
