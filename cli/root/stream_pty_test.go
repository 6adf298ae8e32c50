package root_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// gate holds back every write of a response that contains hold until
// released, so a test can look at the terminal while the answer is known
// to be incomplete.
type gate struct {
	hold    []byte
	release chan struct{}
	once    sync.Once
}

// open lets every held write through, now and after.
func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

type gatedWriter struct {
	http.ResponseWriter
	g *gate
}

func (w gatedWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, w.g.hold) {
		<-w.g.release
	}
	return w.ResponseWriter.Write(p)
}

func (w gatedWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// terminal collects what a pseudo-terminal's master reads, and tells
// waiters each time more arrives.
type terminal struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	more chan struct{}
	done chan struct{}
}

func readTerminal(ptmx *os.File) *terminal {
	term := &terminal{more: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(term.done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			term.mu.Lock()
			term.buf.Write(b[:n])
			term.mu.Unlock()
			select {
			case term.more <- struct{}{}:
			default:
			}
			if err != nil { // EIO once the child's side is closed
				return
			}
		}
	}()
	return term
}

// text is what the terminal showed, its CRLF line ends made LF.
func (term *terminal) text() string {
	term.mu.Lock()
	defer term.mu.Unlock()
	return strings.ReplaceAll(term.buf.String(), "\r\n", "\n")
}

// waitFor waits until the terminal shows s. The limit is only there so
// that a run that streams nothing fails with a message rather than at the
// test binary's timeout; a passing run never comes near it.
func (term *terminal) waitFor(t *testing.T, s string) {
	t.Helper()
	limit := time.After(2 * time.Minute)
	for !strings.Contains(term.text(), s) {
		select {
		case <-term.more:
		case <-term.done:
			if !strings.Contains(term.text(), s) {
				t.Fatalf("the terminal closed without showing %q: %q", s, term.text())
			}
		case <-limit:
			t.Fatalf("the terminal never showed %q while the answer was held back: %q", s, term.text())
		}
	}
}

// TestStreamToATerminal runs the real binary with stdout on a
// pseudo-terminal against fakellm, whose answer is held back after its
// first words: they must reach the terminal before the rest exists. The
// commentary before a tool call is shown there too and, stderr not being
// a terminal, written to stderr; the answer appears on the terminal once.
// ptyRunCmd is "mecha run" of the test binary (it runs as mecha: TestMain)
// in ws against an Anthropic-wire server at url.
func ptyRunCmd(t *testing.T, ws, url string, stdout io.Writer, stderr *bytes.Buffer) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "anthropic", "-w", ws, "what is here?")
	cmd.Args[0] = "mecha"
	cmd.Env = append(os.Environ(), "MECHA_HOME="+filepath.Join(ws, ".mecha-home"), "NO_COLOR=1",
		"ANTHROPIC_BASE_URL="+url, "ANTHROPIC_API_KEY=sk-ant-test-key")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	return cmd
}

func TestStreamToATerminal(t *testing.T) {
	t.Parallel()
	g := &gate{hold: []byte(`"world."`), release: make(chan struct{})}
	llm := fakellm.New(t, &fakellm.Script{Turns: []fakellm.Turn{
		{Text: "Let me look.", ToolCalls: []fakellm.ToolCall{{ID: "toolu_1", Name: "fs_list", Input: []byte(`{"path":"."}`)}}},
		{Text: "Hello streaming world."},
		// The control: stdout a pipe.
		{Text: "Let me look.", ToolCalls: []fakellm.ToolCall{{ID: "toolu_2", Name: "fs_list", Input: []byte(`{"path":"."}`)}}},
		{Text: "Hello streaming world."},
	}}, fakellm.Options{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		llm.ServeHTTP(gatedWriter{w, g}, r)
	}))
	defer srv.Close()
	// Before the server closes (it waits for the held response): a test
	// that fails while the answer is held must not hang there.
	defer g.open()
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("milk\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mecha := func(stdout io.Writer, stderr *bytes.Buffer) *exec.Cmd {
		return ptyRunCmd(t, ws, srv.URL, stdout, stderr)
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	var stderr bytes.Buffer
	cmd := mecha(tty, &stderr)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if cmd.ProcessState == nil { // the test failed before Wait
			cmd.Process.Kill()
			cmd.Wait()
		}
	}()
	tty.Close()
	term := readTerminal(ptmx)
	term.waitFor(t, "Let me look.\nHello streaming ")
	if strings.Contains(term.text(), "world") {
		t.Fatalf("the terminal shows what the server has not sent: %q", term.text())
	}
	g.open()
	err = cmd.Wait()
	<-term.done
	if err != nil {
		t.Fatalf("mecha run: %v\n%s", err, stderr.String())
	}
	if got := term.text(); got != "Let me look.\nHello streaming world.\n" {
		t.Errorf("the terminal showed %q", got)
	}
	if !strings.Contains(stderr.String(), "\nLet me look.\n") || strings.Contains(stderr.String(), "world") {
		t.Errorf("stderr (not a terminal) should keep the commentary, not the answer:\n%s", stderr.String())
	}

	// The control: stdout a pipe, the answer printed once at the end and
	// the commentary on stderr only.
	var out bytes.Buffer
	stderr.Reset()
	if err := mecha(&out, &stderr).Run(); err != nil {
		t.Fatalf("mecha run: %v\n%s", err, stderr.String())
	}
	if out.String() != "Hello streaming world.\n" {
		t.Errorf("stdout (a pipe) %q", out.String())
	}
	if !strings.Contains(stderr.String(), "\nLet me look.\n") || strings.Contains(stderr.String(), "world") {
		t.Errorf("stderr should keep the commentary, not the answer:\n%s", stderr.String())
	}
}
