//go:build linux

package root

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
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

// enter types text and then, as a person would and a paste does not
// (chatcmd's input.go), presses Enter a moment after the text is shown.
func (s *ptyScreen) enter(text string) {
	s.t.Helper()
	s.ptmx.WriteString(text)
	s.waitFor("│ " + text)
	time.Sleep(100 * time.Millisecond)
	s.ptmx.WriteString("\r")
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
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("default_provider = \"anthropic\"\n"+trusting(t, ws)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := onPTY(t, vars)
	s.waitFor("\x1b[?1049h") // the alternate screen
	s.waitFor("ready · ")
	s.enter("hi there")
	s.waitFor("Hello from the model.")
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha exited %d: %s", code, s.err.String())
	}
	store := &session.Store{Dir: filepath.Join(home, "sessions")}
	l, err := store.List()
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
	s.enter("more")
	s.waitFor("Still here.")
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha chat -c exited %d: %s", code, s.err.String())
	}
	got, err := store.Load(l.Sessions[0].Ref)
	if err != nil || len(got.Configs()) != 2 || len(got.Messages()) != 4 {
		t.Errorf("after -c the session has %d attaches and %d messages (%v), want 2 and 4", len(got.Configs()), len(got.Messages()), err)
	}
}

// chatOnPTY opens "mecha chat ARGS" on a pseudo-terminal against url (a
// fakellm, or a gate in front of one), in a fresh home and workspace.
func chatOnPTY(t *testing.T, url string, args ...string) (s *ptyScreen, home, ws string) {
	t.Helper()
	home, ws = t.TempDir(), t.TempDir()
	t.Chdir(ws)
	vars := map[string]string{"MECHA_HOME": home, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key-of-the-chat",
		"TERM": "xterm-256color"}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("default_provider = \"anthropic\"\n"+trusting(t, ws)), 0o600); err != nil {
		t.Fatal(err)
	}
	s = onPTY(t, vars, append([]string{"chat"}, args...)...)
	s.waitFor("ready · ")
	return s, home, ws
}

// onlySession loads the one session of the store at home.
func onlySession(t *testing.T, home string) *session.Session {
	t.Helper()
	store := &session.Store{Dir: filepath.Join(home, "sessions")}
	l, err := store.List()
	if err != nil || len(l.Sessions) != 1 {
		t.Fatalf("sessions %+v, %v; want one", l, err)
	}
	s, err := store.Load(l.Sessions[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestChatPasteOnATerminal: a bracketed paste of three lines arrives as one
// message, waits in the input box, and is one prompt when Enter is
// pressed; lines pasted without brackets (arriving in one read) are one
// prompt too, not one each.
func TestChatPasteOnATerminal(t *testing.T) {
	srv := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{{Text: "Got three lines."}, {Text: "Got two."}}}, fakellm.Options{})
	s, home, _ := chatOnPTY(t, srv.URL())
	s.ptmx.WriteString("\x1b[200~line one\rline two\rline three\x1b[201~")
	s.waitFor("│ line three")
	time.Sleep(300 * time.Millisecond)
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("the paste was sent before Enter (%d requests)", n)
	}
	s.ptmx.WriteString("\r")
	s.waitFor("Got three lines.")
	s.waitFor("ready · ")

	s.ptmx.WriteString("alpha\rbeta\r") // no brackets: one read
	s.waitFor("│ beta")
	time.Sleep(300 * time.Millisecond)
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("lines pasted without brackets were sent before Enter (%d requests)", n)
	}
	s.ptmx.WriteString("\r")
	s.waitFor("Got two.")
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha chat exited %d: %s", code, s.err.String())
	}
	var prompts []string
	for _, m := range onlySession(t, home).Messages() {
		if m.Role == "user" {
			prompts = append(prompts, m.Content[0].Text)
		}
	}
	if got, want := strings.Join(prompts, "|"), "line one\nline two\nline three|alpha\nbeta"; got != want {
		t.Errorf("prompts sent %q, want %q", got, want)
	}
}

// gate holds the first request to the model until released, so that a
// test knows when the answer, and so the prompt it brings, comes.
type gate struct {
	next     http.Handler
	n        atomic.Int32
	arrived  chan struct{}
	released chan struct{}
}

func newGate(t *testing.T, to string) (*gate, string) {
	u, err := url.Parse(to)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{next: httputil.NewSingleHostReverseProxy(u), arrived: make(chan struct{}), released: make(chan struct{})}
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return g, srv.URL
}

func (g *gate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.n.Add(1) == 1 {
		close(g.arrived)
		<-g.released
	}
	g.next.ServeHTTP(w, r)
}

// TestChatTypeAheadOnATerminal is the attack on the permission prompt:
// keys typed at a fast typist's pace from 20 ms before the prompt is
// drawn and on through it ("also check the docs and say why": a, y and n) go to the
// input box and do not answer it, nor does a paste, bracketed or not; the
// call stays unanswered in the session and the tool does not run. The
// control: y pressed once the prompt shows its choices allows the call.
func TestChatTypeAheadOnATerminal(t *testing.T) {
	const command = "rm -rf build && echo cleaned"
	srv := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{
		{ToolCalls: []fakellm.ToolCall{{ID: "toolu_clean", Name: "shell", Input: json.RawMessage(`{"command":"` + command + `"}`)}}},
		{Text: "Cleaned."},
	}}, fakellm.Options{})
	g, url := newGate(t, srv.URL())
	s, home, ws := chatOnPTY(t, url, "--sandbox", "none", "--trifecta", "off")
	build := filepath.Join(ws, "build")
	if err := os.Mkdir(build, 0o700); err != nil {
		t.Fatal(err)
	}
	s.enter("clean the build")
	<-g.arrived

	const ahead = "also check the docs and say why"
	start := time.Now()
	drawn := make(chan time.Duration, 1)
	go func() {
		for !s.shows("wants to run") {
			time.Sleep(time.Millisecond)
		}
		drawn <- time.Since(start)
	}()
	for i, r := range ahead { // a key every 50 ms: a fast typist
		s.ptmx.WriteString(string(r))
		if i == 0 { // the model answers as the first key is typed: the prompt is drawn some 20 ms later
			close(g.released)
		}
		time.Sleep(50 * time.Millisecond)
	}
	typed := time.Since(start)
	s.waitFor("│ " + ahead)
	at := <-drawn
	t.Logf("the prompt was drawn %v after the first key typed ahead (the model's answer let go with it); typing went on for %v after it", at.Round(time.Millisecond), (typed - at).Round(time.Millisecond))
	s.waitFor("[y] allow once") // the keyboard still: the choices show
	unanswered(t, home, "toolu_clean", "typed ahead")

	// A paste never answers it: bracketed, then without brackets.
	s.ptmx.WriteString("\x1b[200~y\x1b[201~")
	s.waitFor("│ " + ahead + "y")
	s.waitFor("[y] allow once")
	s.ptmx.WriteString("yes")
	s.waitFor("│ " + ahead + "yyes")
	s.waitFor("[y] allow once")
	unanswered(t, home, "toolu_clean", "pasted")
	if _, err := os.Stat(build); err != nil {
		t.Fatalf("the tool ran before it was allowed: %v", err)
	}

	// The control: the same key, pressed once the choices are shown.
	s.ptmx.WriteString("y")
	s.waitFor("shell: allowed once")
	s.waitFor("Cleaned.")
	s.waitFor("│ " + ahead + "yyes") // what was typed ahead is kept
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha chat exited %d: %s", code, s.err.String())
	}
	if _, err := os.Stat(build); !os.IsNotExist(err) {
		t.Errorf("the call allowed by the control did not run: %v", err)
	}
	if res := result(onlySession(t, home), "toolu_clean"); res == nil || !strings.Contains(res.Content, "cleaned") {
		t.Errorf("the call's result: %+v; want it run", res)
	}
}

// shows reports whether the screen shows text now.
func (s *ptyScreen) shows(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Contains(s.screen.String(), text)
}

// unanswered fails unless the session at home has the call id, asked for
// and given no result.
func unanswered(t *testing.T, home, id, when string) {
	t.Helper()
	s := onlySession(t, home)
	asked := false
	for _, m := range s.Messages() {
		for _, b := range m.Content {
			asked = asked || b.Type == transcript.BlockToolUse && b.ID == id
		}
	}
	if !asked {
		t.Fatalf("%s: the session does not have the call %s", when, id)
	}
	if res := result(s, id); res != nil {
		t.Fatalf("%s: the call has a result: %q", when, res.Content)
	}
}

// result is the result of call id in s, nil if it has none.
func result(s *session.Session, id string) *transcript.Block {
	for _, m := range s.Messages() {
		for i := range m.Content {
			if b := &m.Content[i]; b.Type == transcript.BlockToolResult && b.ToolUseID == id {
				return b
			}
		}
	}
	return nil
}

// TestChatCostOutOfTheBox: with no config.toml, the chat on a model of
// mecha's price table shows the cost in its status line and in /cost:
// 1,000 input, 200 output, 5,000 cache-read and 2,000 cache-write tokens
// of claude-sonnet-4-5 cost $0.0150. Before the table it said "cost —".
// The workspace's question is answered "not now" on the terminal.
func TestChatCostOutOfTheBox(t *testing.T) {
	usage := &transcript.Usage{InputTokens: 1000, OutputTokens: 200, CacheReadTokens: 5000, CacheWriteTokens: 2000}
	srv := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{{Text: "Priced.", Usage: usage}}}, fakellm.Options{})
	home, ws := t.TempDir(), t.TempDir()
	t.Chdir(ws)
	vars := map[string]string{"MECHA_HOME": home, "ANTHROPIC_BASE_URL": srv.URL(), "ANTHROPIC_API_KEY": "test-key-of-the-chat",
		"TERM": "xterm-256color"}
	s := onPTY(t, vars, "chat", "-p", "anthropic", "--sandbox", "none")
	// Out of the box the workspace is untrusted: the chat asks once, and
	// "not now" writes nothing.
	s.waitFor("Do you trust the files in")
	s.waitFor("[n] not now")
	s.ptmx.WriteString("n")
	s.waitFor("not trusted for this chat")
	s.waitFor("ready · ")
	s.waitFor("claude-sonnet-4-5")
	s.enter("what does it cost?")
	s.waitFor("Priced.")
	s.waitFor("cost $0.0150")
	s.enter("/cost")
	s.waitFor("cost: $0.0150")
	if code := s.quit(); code != 0 {
		t.Fatalf("mecha chat exited %d: %s", code, s.err.String())
	}
	if _, err := os.Stat(filepath.Join(home, "config.toml")); err == nil {
		t.Error("a config.toml was written")
	}
}

// trusting is config.toml's line trusting ws: the chat then asks no
// question about it (these tests are not about workspace trust).
func trusting(t *testing.T, ws string) string {
	t.Helper()
	c, err := filepath.EvalSymlinks(ws)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("trusted_workspaces = [%q]\n", c)
}
