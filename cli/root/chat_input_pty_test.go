//go:build linux

package root

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// TestChatHistoryOnATerminal: prompts typed in one chat come back with Up
// in the next chat of the same workspace, newest first, and Ctrl-R finds
// one; a pasted prompt is never written to the history file. Ctrl-G opens
// the input box in $EDITOR (a script that rewrites the file) and takes
// back what it saved; Ctrl-D on an empty box leaves the chat.
func TestChatHistoryOnATerminal(t *testing.T) {
	srv := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{{Text: "One."}, {Text: "Two."}, {Text: "Three."}, {Text: "Four."}}}, fakellm.Options{})
	home, ws := t.TempDir(), t.TempDir()
	t.Chdir(ws)
	editor := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nprintf 'edited: %s\\n' \"$(cat \"$1\")\" > \"$1\"\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"MECHA_HOME": home, "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "test-key-of-the-chat",
		"TERM": "xterm-256color", "EDITOR": editor}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("default_provider = \"anthropic\"\n"+trusting(t, ws)), 0o600); err != nil {
		t.Fatal(err)
	}

	s := onPTY(t, vars, "chat", "--sandbox", "none")
	s.waitFor("ready · ")
	s.send("first prompt")
	s.waitFor("One.")
	s.send("second prompt")
	s.waitFor("Two.")
	s.ptmx.WriteString("\x1b[200~pasted sk-SECRET-0123\x1b[201~")
	s.waitFor("│ pasted sk-SECRET-0123")
	time.Sleep(100 * time.Millisecond)
	s.ptmx.WriteString("\r")
	s.sent("pasted")
	s.waitFor("Three.")
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha chat exited %d: %s", code, s.err.String())
	}
	files, _ := filepath.Glob(filepath.Join(home, "history", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("history files %v, want one", files)
	}
	b, _ := os.ReadFile(files[0])
	if got, want := string(b), "\"first prompt\"\n\"second prompt\"\n"; got != want {
		t.Errorf("the history file holds %q, want %q (the paste never written)", got, want)
	}
	if st, err := os.Stat(files[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the history file: %v, %v; want mode 0600", st, err)
	}

	s = onPTY(t, vars, "chat", "--sandbox", "none")
	s.waitFor("ready · ")
	s.ptmx.WriteString("\x1b[A")
	s.waitFor("│ second prompt")
	s.ptmx.WriteString("\x1b[A")
	s.waitFor("│ first prompt")
	s.ptmx.WriteString("\x1b[B")
	s.waitFor("│ second prompt")
	s.ptmx.WriteString("\x1b[B") // back to the draft: empty
	s.waitFor("Ask mecha to do something")

	s.ptmx.WriteString("\x12") // Ctrl-R
	s.waitFor("history search")
	s.ptmx.WriteString("fir")
	s.waitFor("fir → first prompt")
	s.ptmx.WriteString("\r") // takes it into the box, not sent
	s.waitFor("│ first prompt")

	s.ptmx.WriteString("\x07") // Ctrl-G: the editor rewrites the text
	s.waitFor("│ edited: first prompt")
	time.Sleep(100 * time.Millisecond)
	s.ptmx.WriteString("\r")
	s.sent("edited: first prompt")
	s.waitFor("Four.")
	s.waitFor("ready · ")

	s.ptmx.WriteString("\x04") // Ctrl-D on an empty box
	select {
	case code := <-s.done:
		if code != 0 {
			t.Fatalf("Ctrl-D: mecha chat exited %d: %s", code, s.err.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Ctrl-D on an empty box did not end the chat")
	}
	var prompts []string
	for _, m := range onlySessionNewest(t, home).Messages() {
		if m.Role == "user" {
			prompts = append(prompts, m.Content[0].Text)
		}
	}
	if got := strings.Join(prompts, "|"); got != "edited: first prompt" {
		t.Errorf("the second chat sent %q, want the editor's text", got)
	}
}

// onlySessionNewest loads the newest session of the store at home.
func onlySessionNewest(t *testing.T, home string) *session.Session {
	t.Helper()
	store := &session.Store{Dir: filepath.Join(home, "sessions")}
	l, err := store.List()
	if err != nil || len(l.Sessions) == 0 {
		t.Fatalf("sessions %+v, %v", l, err)
	}
	s, err := store.Load(l.Sessions[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestChatScrollbackOnATerminal: the chat draws on the alternate screen;
// when it ends, the conversation is printed on the terminal's own screen
// (so it stays in the scrollback), above the line naming the session.
func TestChatScrollbackOnATerminal(t *testing.T) {
	srv := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{{Text: "Hello from the model."}}}, fakellm.Options{})
	s, _, _ := chatOnPTY(t, srv.URL(), "--sandbox", "none")
	s.send("hi there")
	s.waitFor("Hello from the model.")
	s.ptmx.WriteString("/exit")
	s.waitFor("│ /exit")
	time.Sleep(100 * time.Millisecond)
	s.ptmx.WriteString("\r")
	select {
	case code := <-s.done:
		if code != 0 {
			t.Fatalf("/exit: mecha chat exited %d: %s", code, s.err.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatal("/exit did not end the chat")
	}
	s.waitFor("\x1b[?1049l") // the alternate screen left
	s.waitFor("> hi there")  // then, on the terminal's own screen
	s.waitFor("Hello from the model.")
	s.mu.Lock()
	after := string(s.buf.Bytes()[s.seen:])
	s.mu.Unlock()
	if !strings.Contains(after, "Hello from the model.") {
		t.Errorf("the conversation was not written after the alternate screen was left: %q", after)
	}
}

// send types text and presses Enter as enter does; on a machine so loaded
// that the chat takes the Enter as part of the text (a newline: input.go
// errs that way), it takes the newline back and presses Enter again, as a
// person would, until the input box is empty.
func (s *ptyScreen) send(text string) {
	s.t.Helper()
	s.enter(text)
	s.sent(text)
}

// sent makes sure the Enter just pressed sent the input box's text.
func (s *ptyScreen) sent(text string) {
	s.t.Helper()
	for range 20 {
		if s.showsWithin("Ask mecha to do something", time.Second) {
			return
		}
		s.ptmx.WriteString("\x7f")
		time.Sleep(100 * time.Millisecond)
		s.ptmx.WriteString("\r")
	}
	s.t.Fatalf("Enter never sent %q", text)
}

// showsWithin says whether the screen shows text within d.
func (s *ptyScreen) showsWithin(text string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s.shows(text) {
			return true
		}
	}
	return false
}
