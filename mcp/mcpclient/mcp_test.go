package mcpclient

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/testkit/mcptest"
	"github.com/mecha-agent/mecha/testkit/proctest"
)

// TestMain lets the test binary be the stdio test server.
func TestMain(m *testing.M) {
	if os.Getenv("MECHA_MCPTEST_SERVER") == "1" {
		os.Exit(mcptest.Main(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// serverCommand is a config that starts the test server as a process.
func serverCommand(t *testing.T, name string, args ...string) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Name: name, Command: exe, Args: args, Env: map[string]string{"MECHA_MCPTEST_SERVER": "1"}}
}

// memory starts servers in memory: each config's name picks the options.
func memory(t *testing.T, opts map[string]mcptest.Options) Options {
	return Options{Dial: func(ctx context.Context, c ServerConfig) (mcp.Transport, io.Closer, error) {
		ct, st := mcp.NewInMemoryTransports()
		ss, err := mcptest.NewServer(opts[c.Name]).Connect(ctx, st, nil)
		if err != nil {
			return nil, nil, err
		}
		return ct, ss, nil
	}}
}

func start(t *testing.T, configs []ServerConfig, opts Options) *Set {
	t.Helper()
	set := Start(context.Background(), configs, opts)
	t.Cleanup(func() { set.Close() })
	return set
}

func toolNamed(t *testing.T, set *Set, name string) *Tool {
	t.Helper()
	tools, err := set.Tools()
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range tools {
		if tl.Spec().Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func TestToolName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ server, tool, want string }{
		{"everything", "echo", "mcp__everything__echo"},
		{"my server", "odd.name!", "mcp__my_server__odd_name_"},
		{"gh", "get-issue", "mcp__gh__get-issue"},
		{"s", strings.Repeat("x", 100), "mcp__s__" + strings.Repeat("x", 56)},
		{"ünï", "t", "mcp___n___t"},
	} {
		if got := ToolName(c.server, c.tool); got != c.want || len(got) > MaxNameLen {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.server, c.tool, got, c.want)
		}
	}
}

func TestNamesAndClashes(t *testing.T) {
	t.Parallel()
	set := start(t, []ServerConfig{{Name: "a.b", URL: "mem"}, {Name: "a_b", URL: "mem"}}, memory(t, nil))
	_, err := set.Tools()
	if err == nil || !strings.Contains(err.Error(), `of server "a.b" and "`) || !strings.Contains(err.Error(), `of server "a_b"`) {
		t.Fatalf("clash: got %v", err)
	}
	// Control: the same servers under distinct names offer every tool.
	set = start(t, []ServerConfig{{Name: "one", URL: "mem"}, {Name: "two", URL: "mem"}}, memory(t, nil))
	tools, err := set.Tools()
	if err != nil || len(tools) != 2*len(mcptest.ToolNames) {
		t.Fatalf("got %d tools, %v", len(tools), err)
	}
	toolNamed(t, set, "mcp__one__odd_name_")
	got := ExpandNames([]string{"fs_read", "mcp__two", "mcp__one__echo", "mcp__nope"}, tools)
	if got[0] != "fs_read" || !strings.HasPrefix(got[1], "mcp__two__") || got[len(got)-2] != "mcp__one__echo" || got[len(got)-1] != "mcp__nope" ||
		len(got) != 3+len(mcptest.ToolNames) {
		t.Errorf("ExpandNames = %v", got)
	}
}

func TestOnlyTools(t *testing.T) {
	t.Parallel()
	set := start(t, []ServerConfig{{Name: "s", URL: "mem", Tools: []string{"echo", "nothere"}}}, memory(t, nil))
	tools, _ := set.Tools()
	if len(tools) != 1 || tools[0].Spec().Name != "mcp__s__echo" {
		t.Fatalf("tools = %v", tools)
	}
	if w := set.Servers()[0].Warnings; len(w) != 1 || !strings.Contains(w[0], `"nothere"`) {
		t.Errorf("warnings = %v", w)
	}
}

func TestCapabilities(t *testing.T) {
	t.Parallel()
	all := tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, ActsOutward: true, External: true}
	reads := tool.Capabilities{ReadsWorkspace: true}
	for _, c := range []struct {
		name string
		cfg  ServerConfig
		tool string
		want tool.Capabilities
	}{
		{"default is everything, annotations or not", ServerConfig{}, "echo", all},
		{"narrowed", ServerConfig{Capabilities: &reads}, "fail", reads},
		{"trusted read-only closed-world", ServerConfig{TrustAnnotations: true}, "echo", reads},
		{"trusted read-only open-world by default", ServerConfig{TrustAnnotations: true}, "add",
			tool.Capabilities{ReadsWorkspace: true, ReachesNetwork: true, External: true}},
		{"trusted, no annotations", ServerConfig{TrustAnnotations: true}, "fail", all},
		{"narrowed then trusted", ServerConfig{Capabilities: &tool.Capabilities{ReadsWorkspace: true, RunsCommands: true}, TrustAnnotations: true}, "echo", reads},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.cfg.Name, c.cfg.URL = "s", "mem"
			set := start(t, []ServerConfig{c.cfg}, memory(t, nil))
			tl := toolNamed(t, set, "mcp__s__"+c.tool)
			if got := tl.Capabilities(); got != c.want {
				t.Errorf("capabilities = %+v, want %+v", got, c.want)
			}
			if tool.NeedsPermission(tl.Capabilities()) != tool.NeedsPermission(c.want) {
				t.Error("permission follows capabilities")
			}
		})
	}
	// The gate denies an undeclared-safe MCP tool in read-only mode and lets a
	// narrowed one run (control).
	set := start(t, []ServerConfig{{Name: "wide", URL: "mem"}, {Name: "narrow", URL: "mem", Capabilities: &reads}}, memory(t, nil))
	for name, denied := range map[string]bool{"mcp__wide__echo": true, "mcp__narrow__echo": false} {
		res, err := tool.Gate(toolNamed(t, set, name), tool.ModeReadOnly, nil).Run(context.Background(), []byte(`{"text":"hi"}`))
		if err != nil || strings.HasPrefix(res.Content, "denied") != denied {
			t.Errorf("%s in read-only: %+v %v", name, res, err)
		}
	}
}

func TestResultMapping(t *testing.T) {
	t.Parallel()
	set := start(t, []ServerConfig{{Name: "s", URL: "mem"}}, Options{MaxResultBytes: 1000, Dial: memory(t, nil).Dial})
	for _, c := range []struct {
		tool, input, want string
		isErr             bool
	}{
		{"echo", `{"text":"hello"}`, "hello", false},
		{"add", `{"a":2,"b":3}`, `{"sum":5}`, false},
		{"fail", ``, "it failed, as asked", true},
		{"image", `{}`, "here:\n[image: image/png, 1234 bytes, not shown]\n[audio: audio/wav, 99 bytes, not shown]", false},
	} {
		res, err := toolNamed(t, set, "mcp__s__"+c.tool).Run(context.Background(), []byte(c.input))
		if err != nil || res.Content != c.want || res.IsError != c.isErr {
			t.Errorf("%s: got %+v, %v; want %q (error %v)", c.tool, res, err, c.want, c.isErr)
		}
	}
	res, _ := toolNamed(t, set, "mcp__s__big").Run(context.Background(), []byte(`{"bytes":5000}`))
	if !strings.HasPrefix(res.Content, "BEGIN") || !strings.HasSuffix(res.Content, "END") || !strings.Contains(res.Content, "bytes cut") || len(res.Content) > 1200 {
		t.Errorf("big result not cut like the built-ins': %d bytes", len(res.Content))
	}
}

func TestToolTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	var cancelled atomic.Int32
	started := make(chan struct{}, 4)
	server := mcptest.Options{Started: func() { started <- struct{}{} }, Cancelled: func() { cancelled.Add(1) }}
	opts := memory(t, map[string]mcptest.Options{"s": server, "patient": server})
	set := start(t, []ServerConfig{
		{Name: "s", URL: "mem", ToolTimeout: 200 * time.Millisecond},
		{Name: "patient", URL: "mem", ToolTimeout: time.Hour},
	}, opts)
	// The tool timeout: the slow call (a minute by default) ends as an
	// error result naming the limit, not after the minute.
	res, err := toolNamed(t, set, "mcp__s__slow").Run(context.Background(), []byte(`{}`))
	if err != nil || !res.IsError || !strings.Contains(res.Content, "did not answer within 200ms (tool_timeout_s)") {
		t.Fatalf("timeout: %+v %v", res, err)
	}
	<-started
	// Ctrl-C: the caller's context ends once the server has started the
	// call (on a server whose own limit is an hour); the call ends with it.
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	res, err = toolNamed(t, set, "mcp__patient__slow").Run(ctx, []byte(`{}`))
	if !errors.Is(err, context.Canceled) || !res.IsError {
		t.Fatalf("cancel: %+v %v", res, err)
	}
	waitFor(t, func() bool { return cancelled.Load() == 2 }, "the server to be told of both cancellations")
	// Control: a call that finishes in time.
	if res, _ := toolNamed(t, set, "mcp__s__slow").Run(context.Background(), []byte(`{"seconds":0.01}`)); res.Content != "waited" {
		t.Errorf("control: %+v", res)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestNeverAnswersInitialize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	bad := serverCommand(t, "mute", "-no-init", "-pid-file", pids)
	bad.StartupTimeout = 300 * time.Millisecond
	good := serverCommand(t, "good")
	set := start(t, []ServerConfig{bad, good}, Options{LogDir: dir, KillGrace: 200 * time.Millisecond})
	s := set.Servers()
	if s[0].Err == nil || !strings.Contains(s[0].Err.Error(), "no answer to initialize within 300ms (startup_timeout_s)") {
		t.Errorf("mute server: %v", s[0].Err)
	}
	if s[1].Err != nil || len(s[1].Tools()) == 0 {
		t.Errorf("the other server goes on: %v", s[1].Err)
	}
	assertGone(t, pids)
}

func TestDiesMidCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	set := start(t, []ServerConfig{serverCommand(t, "s", "-log", "hello from the server")}, Options{LogDir: dir})
	if err := set.Servers()[0].Err; err != nil {
		t.Fatal(err)
	}
	res, err := toolNamed(t, set, "mcp__s__die").Run(context.Background(), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, `server "s" is gone`) {
		t.Fatalf("die: %+v %v", res, err)
	}
	// Every later call is an error result (had it waited on the dead
	// server, the test's deadline would end it: nothing hangs).
	res, err = toolNamed(t, set, "mcp__s__echo").Run(context.Background(), []byte(`{"text":"x"}`))
	if err != nil || !res.IsError {
		t.Fatalf("after death: %+v %v", res, err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "mcp-s.log"))
	if !strings.Contains(string(log), "hello from the server") || !strings.Contains(string(log), "dying mid-call") {
		t.Errorf("the server's stderr is not in its log: %q", log)
	}
}

func TestNoProcessLeftBehind(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pids := filepath.Join(dir, "pids")
	// A server that ignores SIGTERM and stdin's end, and has a child.
	c := serverCommand(t, "stubborn", "-stubborn", "-child", "-pid-file", pids)
	set := Start(context.Background(), []ServerConfig{c, serverCommand(t, "polite", "-child", "-pid-file", pids)}, Options{Environ: os.Environ(), KillGrace: 200 * time.Millisecond})
	for _, s := range set.Servers() {
		if s.Err != nil {
			t.Fatal(s.Err)
		}
	}
	if n := len(readPids(t, pids)); n != 4 {
		t.Fatalf("want 4 pids, got %d", n)
	}
	set.Close()
	assertGone(t, pids)
}

func readPids(t *testing.T, file string) []int {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, _ := strconv.Atoi(f)
		out = append(out, n)
	}
	return out
}

// assertGone checks that every pid in the file is gone (or a zombie
// about to be reaped by init).
func assertGone(t *testing.T, file string) {
	t.Helper()
	pids := readPids(t, file)
	if len(pids) == 0 {
		t.Fatal("no pids recorded")
	}
	waitFor(t, func() bool {
		for _, p := range pids {
			if !proctest.Gone(p) {
				return false
			}
		}
		return true
	}, "every server process to be gone")
}

func TestExpand(t *testing.T) {
	t.Parallel()
	env := map[string]string{"TOKEN": "s3cret"}
	got, err := expand("Bearer ${TOKEN}!", func(k string) string { return env[k] })
	if err != nil || got != "Bearer s3cret!" {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := expand("${NOPE}", func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), "${NOPE} is not set") {
		t.Errorf("unset: %v", err)
	}
	if got, _ := expand("$HOME stays", nil); got != "$HOME stays" {
		t.Errorf("only ${VAR} expands: %q", got)
	}
}

func TestLoadFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), ".mcp.json")
	os.WriteFile(p, []byte(`{"mcpServers":{
		"fs":{"command":"npx","args":["-y","x"],"env":{"A":"1"},"disabled_by_other_client":true},
		"gh":{"type":"http","url":"https://h/mcp","headers":{"Authorization":"Bearer ${GH}"}}}}`), 0o600)
	got, err := LoadFile(p)
	if err != nil || len(got) != 2 || got[0].Name != "fs" || got[0].Kind() != TransportStdio || got[1].Kind() != TransportHTTP ||
		got[1].Headers["Authorization"] != "Bearer ${GH}" {
		t.Fatalf("got %+v, %v", got, err)
	}
	os.WriteFile(p, []byte(`{"mcpServers":{"x":{"type":"carrier-pigeon","url":"u"}}}`), 0o600)
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), `unknown type "carrier-pigeon"`) {
		t.Errorf("bad type: %v", err)
	}
	if _, err := Merge(got, got[:1]); err == nil || !strings.Contains(err.Error(), `"fs" is configured twice`) {
		t.Errorf("merge: %v", err)
	}
}

// TestResultRedactedBeforeCut: a secret across the cut of a long result
// is replaced whole before the cut; without Secrets (the control) the cut
// leaves its first half.
func TestResultRedactedBeforeCut(t *testing.T) {
	t.Parallel()
	const secret = "CANARY-mcp-0123456789abcdef"
	text := strings.Repeat("a", 490) + secret + strings.Repeat("b", 2000) // the head keeps 500 bytes
	input, _ := json.Marshal(map[string]string{"text": text})
	for _, secrets := range [][]tool.Secret{nil, {{Name: "DB_PASS", Value: secret}}} {
		opts := memory(t, nil)
		opts.MaxResultBytes, opts.Secrets = 1000, secrets
		set := start(t, []ServerConfig{{Name: "s", URL: "mem"}}, opts)
		res, err := toolNamed(t, set, "mcp__s__echo").Run(context.Background(), input)
		if err != nil || !strings.Contains(res.Content, "bytes cut") {
			t.Fatalf("echo: %.100q, %v", res.Content, err)
		}
		left := strings.Contains(res.Content, secret[:10])
		if secrets == nil && !left {
			t.Errorf("control: the cut leaves no fragment: %q", res.Content)
		}
		if secrets != nil && left {
			t.Errorf("a fragment of the secret is left: %q", res.Content)
		}
	}
}
