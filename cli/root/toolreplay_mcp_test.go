package root_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redo scripts the one session in dir and runs the script in a fresh
// workspace, then reruns the session: the script's output is returned
// and the rerun must find every call the same. The rerun is --trifecta
// off, as the proxy records: the recorded servers' tools declare every
// capability, so after the first call the rerun's conversation is armed,
// as a run's would be, and a later call would be refused.
func redo(t *testing.T, env []string, dir string, calls int) string {
	t.Helper()
	l := onlySession(t, dir)
	id := l.Meta.ID
	script := filepath.Join(t.TempDir(), "replay.sh")
	runCmd(t, env, "mecha", "script", "-o", script, id)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "sh", script, t.TempDir())
	sh.Env = env
	var stderr strings.Builder
	sh.Stderr = &stderr
	out, err := sh.Output()
	if err != nil {
		b, _ := os.ReadFile(script)
		t.Fatalf("the script: %v\n%s\n%s\nscript:\n%s", err, out, stderr.String(), b)
	}
	if want := "replay: done, " + itoa(calls) + " calls redone"; !strings.Contains(stderr.String(), want) {
		t.Fatalf("the script's stderr lacks %q:\n%s", want, stderr.String())
	}
	rerun := runCmd(t, env, "mecha", "rerun", "--yes", "--trifecta", "off", "--no-session", "-w", t.TempDir(), id)
	if want := "same: " + itoa(calls) + " same, 0 differ, 0 skipped of " + itoa(calls) + " calls"; !strings.Contains(rerun, want) {
		t.Fatalf("rerun:\n%s\nwant %q", rerun, want)
	}
	return string(out)
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestMCPProxyScriptRerun records a proxy session with a go-sdk client in
// front of the test upstream, several calls in one session (one of them
// with hostile text, one that fails), then scripts it, runs the script,
// and reruns it: the script calls the upstream through mecha's client,
// and every call is the same.
func TestMCPProxyScriptRerun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := mechaEnv(dir)
	cmd := exec.Command("mecha", "mcp", "proxy", "--name", "up", "--", "mcpupstream")
	cmd.Env = env
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	hostile := "it's \"q\" $(touch pwned) `x` \\ é\nMECHA_INPUT\n"
	call(t, cs, "echo", map[string]any{"text": hostile})
	call(t, cs, "fail", map[string]any{})
	call(t, cs, "slow", map[string]any{"ms": 5})
	cs.Close()
	out := redo(t, env, dir, 3)
	if !strings.Contains(out, "echo: "+hostile) || !strings.Contains(out, "it failed") || !strings.Contains(out, "slept 5 ms") {
		t.Fatalf("the script printed:\n%s", out)
	}
}

// TestToolReplayServerEverything records calls to the reference
// server-everything through the proxy, then scripts and reruns them
// through it (server-everything's own command, as recorded).
func TestToolReplayServerEverything(t *testing.T) {
	dir := interop(t)
	script := filepath.Join(dir, "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	sessions := t.TempDir()
	env := mechaEnv(sessions)
	cmd := exec.Command("mecha", "mcp", "proxy", "--name", "everything", "--", node(dir), script, "stdio")
	cmd.Env = env
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	call(t, cs, "echo", map[string]any{"message": "it's $(x) é"})
	call(t, cs, "get-sum", map[string]any{"a": 2, "b": 40})
	cs.Close()
	out := redo(t, env, sessions, 2)
	if !strings.Contains(out, "Echo: it's $(x) é") || !strings.Contains(out, "42") {
		t.Fatalf("the script printed:\n%s", out)
	}
}
