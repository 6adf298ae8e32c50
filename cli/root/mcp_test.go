package root_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/mcpproxytest"
)

// These tests drive the real binary (the test binary doubling as mecha,
// see TestMain) with a go-sdk client, and read back what it recorded.

// mechaEnv is an environment whose session store is dir.
func mechaEnv(dir string) []string {
	return append(os.Environ(), "MECHA_SESSION_DIR="+dir, "MECHA_HOME="+filepath.Join(dir, "home"), "NO_COLOR=1")
}

func connect(t *testing.T, tr mcp.Transport) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "e2e-client", Version: "0.0.7"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := c.Connect(ctx, tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// onlySession loads the one session in dir.
func onlySession(t *testing.T, dir string) *session.Session {
	t.Helper()
	store := &session.Store{Dir: dir}
	l, err := store.List()
	if err != nil || len(l.Sessions) != 1 {
		t.Fatalf("sessions in %s: %v %v", dir, l, err)
	}
	s, err := store.Load(l.Sessions[0].Ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func toolCalls(s *session.Session) []*transcript.ToolCall {
	var out []*transcript.ToolCall
	for _, r := range s.Records {
		if c, ok := r.(*transcript.ToolCall); ok {
			out = append(out, c)
		}
	}
	return out
}

// checkCall holds a record to what the client sent and got.
func checkCall(t *testing.T, c *transcript.ToolCall, id, tool, args, content string, isError bool) {
	t.Helper()
	if string(c.ID) != id || c.Tool != tool || string(c.Arguments) != args || string(c.Content) != content || c.IsError != isError || c.Error != "" {
		t.Errorf("record:\n id %s tool %s args %s content %s is_error %v error %q\nwant\n id %s tool %s args %s content %s is_error %v",
			c.ID, c.Tool, c.Arguments, c.Content, c.IsError, c.Error, id, tool, args, content, isError)
	}
	if c.StartedAt.IsZero() || c.DurationMS < 0 || c.DurationMS > 30000 || c.At.Before(c.StartedAt) {
		t.Errorf("timing: started %v, %v ms, at %v", c.StartedAt, c.DurationMS, c.At)
	}
}

func TestMCPServeStdio(t *testing.T) {
	t.Parallel()
	dir, ws := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o600)
	cmd := exec.Command("mecha", "mcp", "serve", "-w", ws)
	cmd.Env = mechaEnv(dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs := connect(t, &mcp.CommandTransport{Command: cmd})

	r := call(t, cs, "fs_read", map[string]any{"path": "a.txt"})
	if r.IsError || !strings.Contains(resultText(r), "alpha") {
		t.Fatalf("fs_read: %q", resultText(r))
	}
	denied := "denied: fs_write modifies the workspace and the run is in read-only mode"
	if r := call(t, cs, "fs_write", map[string]any{"path": "b.txt", "content": "x"}); !r.IsError || resultText(r) != denied {
		t.Fatalf("fs_write in read-only mode: %q", resultText(r))
	}
	if r := call(t, cs, "shell", map[string]any{"command": "touch c.txt"}); !r.IsError || !strings.HasPrefix(resultText(r), "denied: shell runs commands") {
		t.Fatalf("shell in read-only mode: %q", resultText(r))
	}
	if _, err := os.Stat(filepath.Join(ws, "b.txt")); err == nil {
		t.Fatal("a denied write happened")
	}
	if err := cs.Close(); err != nil {
		t.Fatal(err)
	}

	s := onlySession(t, dir)
	if c := s.Meta.MCPClient; c == nil || c.Name != "e2e-client" || c.Version != "0.0.7" {
		t.Fatalf("meta client %+v", s.Meta.MCPClient)
	}
	cfg := s.Records[0].(*transcript.Config)
	if cfg.Workspace != ws || cfg.PermissionMode != "read-only" || strings.Join(cfg.Tools, ",") != "fs_read,fs_list,fs_write,fs_edit,fs_grep,fs_glob,shell,web_fetch" {
		t.Fatalf("config %+v", cfg)
	}
	calls := toolCalls(s)
	if len(calls) != 3 {
		t.Fatalf("%d calls", len(calls))
	}
	checkCall(t, calls[1], idAfter(calls[0].ID), "fs_write", `{"content":"x","path":"b.txt"}`, `[{"type":"text","text":"`+denied+`"}]`, true)
	if calls[0].Tool != "fs_read" || string(calls[0].Arguments) != `{"path":"a.txt"}` || !strings.Contains(string(calls[0].Content), "alpha") {
		t.Errorf("fs_read record %+v", calls[0])
	}
	if !strings.Contains(stderr.String(), "mecha: session "+s.Meta.ID) {
		t.Errorf("stderr: %s", stderr.String())
	}

	// sessions show renders the calls, text and JSON.
	show := exec.Command("mecha", "sessions", "show", s.Meta.ID)
	show.Env = mechaEnv(dir)
	out, err := show.Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "→ fs_write {\"content\":\"x\",\"path\":\"b.txt\"}\n  ✗ "+denied) || !strings.Contains(string(out), "client     e2e-client 0.0.7") {
		t.Errorf("sessions show:\n%s", out)
	}
	show = exec.Command("mecha", "sessions", "show", "--json", s.Meta.ID)
	show.Env = mechaEnv(dir)
	out, err = show.Output()
	if err != nil || !strings.Contains(string(out), `"record": "tool_call"`) {
		t.Errorf("sessions show --json: %v\n%s", err, out)
	}
}

// idAfter is the JSON-RPC id the go-sdk client gives its next request.
func idAfter(id json.RawMessage) string {
	var n int
	if json.Unmarshal(id, &n) != nil {
		return "?"
	}
	b, _ := json.Marshal(n + 1)
	return string(b)
}

// TestMCPServeRecordingFails: a session store that cannot be written costs
// one stderr line, and no call.
func TestMCPServeRecordingFails(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "a.txt"), []byte("alpha\n"), 0o600)
	cmd := exec.Command("mecha", "mcp", "serve", "-w", ws)
	cmd.Env = mechaEnv(filepath.Join(file, "sessions"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	for range 3 {
		if r := call(t, cs, "fs_read", map[string]any{"path": "a.txt"}); r.IsError {
			t.Fatalf("a call failed: %q", resultText(r))
		}
	}
	cs.Close()
	if n := strings.Count(stderr.String(), "mecha: recording stopped, calls are still answered"); n != 1 {
		t.Fatalf("said %d times:\n%s", n, stderr.String())
	}
}

func TestMCPProxyStdio(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command("mecha", "mcp", "proxy", "--name", "up", "--", "mcpupstream", "--flag")
	cmd.Env = mechaEnv(dir)
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	if si := cs.InitializeResult().ServerInfo; si.Name != mcpproxytest.Name || si.Version != mcpproxytest.Version {
		t.Fatalf("serverInfo %+v", si)
	}
	if r := call(t, cs, "echo", json.RawMessage(`{"text":"a & b"}`)); resultText(r) != "echo: a & b" {
		t.Fatalf("echo: %q", resultText(r))
	}
	if r := call(t, cs, "fail", map[string]any{}); !r.IsError {
		t.Fatal("fail did not fail")
	}
	cs.Close()

	s := onlySession(t, dir)
	cfg := s.Records[0].(*transcript.Config)
	u := cfg.MCPUpstream
	if u == nil || u.Name != "up" || u.Transport != "stdio" || u.Command != "mcpupstream" || strings.Join(u.Args, " ") != "--flag" ||
		u.Server.Name != mcpproxytest.Name || u.Server.Version != mcpproxytest.Version || u.Server.ProtocolVersion != "2025-11-25" {
		t.Fatalf("upstream %+v", u)
	}
	calls := toolCalls(s)
	if len(calls) != 2 {
		t.Fatalf("%d calls", len(calls))
	}
	checkCall(t, calls[0], string(calls[0].ID), "echo", `{"text":"a & b"}`, `[{"type":"text","text":"echo: a & b"}]`, false)
	checkCall(t, calls[1], idAfter(calls[0].ID), "fail", `{}`, `[{"type":"text","text":"it failed"}]`, true)
	if string(calls[0].ID) == "null" {
		t.Error("no id recorded")
	}
}

// startHTTP starts mecha with --http on a free loopback port and returns
// the URL it printed.
func startHTTP(t *testing.T, dir string, args ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command("mecha", args...)
	cmd.Env = mechaEnv(dir)
	pr, pw := io.Pipe()
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "mecha: MCP over streamable HTTP at "); ok {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u, cmd
	case <-time.After(20 * time.Second):
		t.Fatal("no URL printed")
	}
	return "", nil
}

func stop(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("did not stop on SIGINT")
	}
}

func TestMCPProxyHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	url, cmd := startHTTP(t, dir, "mcp", "proxy", "--http", "127.0.0.1:0", "--", "mcpupstream")
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url})
	if r := call(t, cs, "echo", map[string]any{"text": "over http"}); resultText(r) != "echo: over http" {
		t.Fatalf("echo: %q", resultText(r))
	}
	cs.Close()
	stop(t, cmd)
	calls := toolCalls(onlySession(t, dir))
	if len(calls) != 1 {
		t.Fatalf("%d calls", len(calls))
	}
	checkCall(t, calls[0], string(calls[0].ID), "echo", `{"text":"over http"}`, `[{"type":"text","text":"echo: over http"}]`, false)
	if string(calls[0].ID) == "null" {
		t.Error("no id recorded over HTTP")
	}
}

func TestMCPServeHTTP(t *testing.T) {
	t.Parallel()
	dir, ws := t.TempDir(), t.TempDir()
	url, cmd := startHTTP(t, dir, "mcp", "serve", "-w", ws, "--yes", "--tool", "fs_write", "--http", "127.0.0.1:0")
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url})
	if r := call(t, cs, "fs_write", map[string]any{"path": "b.txt", "content": "written"}); r.IsError {
		t.Fatalf("fs_write with --yes: %q", resultText(r))
	}
	if b, err := os.ReadFile(filepath.Join(ws, "b.txt")); err != nil || string(b) != "written" {
		t.Fatalf("b.txt: %q %v", b, err)
	}
	cs.Close()
	stop(t, cmd)
	s := onlySession(t, dir)
	if cfg := s.Records[0].(*transcript.Config); cfg.PermissionMode != "yes" || strings.Join(cfg.Tools, ",") != "fs_write" {
		t.Fatalf("config %+v", cfg)
	}
	if calls := toolCalls(s); len(calls) != 1 || calls[0].Tool != "fs_write" || calls[0].IsError {
		t.Fatalf("calls %+v", calls)
	}
}

// The proxy's cost per call over stdio, as a client meets it: the same
// tools/call made of the upstream process directly and through a
// "mecha mcp proxy" process in front of it (docs/PERFORMANCE.md):
//
//	go test ./internal/cmd/root -run '^$' -bench MCPStdio -count 10
func benchStdio(b *testing.B, name string, args ...string) {
	cmd := exec.Command(name, args...)
	cmd.Env = mechaEnv(b.TempDir())
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "0"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	for b.Loop() {
		if r, err := cs.CallTool(context.Background(), p); err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}

func BenchmarkMCPStdioDirect(b *testing.B) { benchStdio(b, "mcpupstream") }
func BenchmarkMCPStdioProxied(b *testing.B) {
	benchStdio(b, "mecha", "mcp", "proxy", "--", "mcpupstream")
}

// TestMCPProxyKilledMidCall: each call is on the record as it arrives, so
// a proxy killed (SIGKILL: nothing runs after) while a call runs leaves
// that call recorded with no result; sessions show says so, and script
// redoes it and says the script is lossy.
func TestMCPProxyKilledMidCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command("mecha", "mcp", "proxy", "--name", "up", "--", "mcpupstream")
	cmd.Env = mechaEnv(dir)
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	if r := call(t, cs, "echo", map[string]any{"text": "first"}); resultText(r) != "echo: first" {
		t.Fatalf("echo: %q", resultText(r))
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 600000}})
	// Wait for the slow call's arrival on the record (polled, bounded:
	// not a measure of speed), then kill the proxy.
	var s *session.Session
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s = onlySession(t, dir)
		if n := len(s.Records); n > 0 {
			if st, ok := s.Records[n-1].(*transcript.ToolCallStart); ok && st.Tool == "slow" {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the slow call never reached the record: %+v", s.Records)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cs.Close()

	env := mechaEnv(dir)
	out := runCmd(t, env, "mecha", "sessions", "show", s.Meta.ID)
	if !strings.Contains(out, "→ slow {\"ms\":600000}\n  ✗ no result: the server stopped while the call ran") ||
		!strings.Contains(out, "→ echo {\"text\":\"first\"}\n  │ echo: first") {
		t.Fatalf("sessions show:\n%s", out)
	}
	script := filepath.Join(t.TempDir(), "replay.sh")
	out = runCmd(t, env, "mecha", "script", "--json", "-o", script, s.Meta.ID)
	var res struct {
		Source string
		Calls  int
		Lossy  bool
		Gaps   []struct{ Reason string }
	}
	if err := json.Unmarshal([]byte(out[strings.Index(out, "{"):]), &res); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !res.Lossy || res.Source != "reconstructed" || res.Calls != 2 || len(res.Gaps) != 1 || !strings.Contains(res.Gaps[0].Reason, "call 2 (mcp__up__slow)") {
		t.Fatalf("script: %+v\n%s", res, out)
	}
}
