package builtin

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/testkit/sandboxtest"
)

// requireSandbox fails unless the kernel can sandbox or
// MECHA_ALLOW_NO_SANDBOX=1 lets the test skip (see sandboxtest.Require).
func requireSandbox(t *testing.T) {
	t.Helper()
	sandboxtest.Require(t, sandbox.Probe())
}

func sandboxedShell(t *testing.T, dir string, s sandbox.Setting) *shell {
	t.Helper()
	ws, err := NewWorkspace(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return NewShell(ws, Options{Sandbox: s, Self: self, SelfName: "builtin.test",
		Env: []string{"PATH=" + os.Getenv("PATH"), "TMPDIR=/tmp"}}).(*shell)
}

func runShell(t *testing.T, sh *shell, command string) (string, bool) {
	t.Helper()
	in, _ := json.Marshal(map[string]string{"command": command})
	res, err := sh.Run(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	return res.Content, res.IsError
}

func TestShellCapabilitiesFollowTheSandbox(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s       sandbox.Setting
		network bool
		says    string
	}{
		{sandbox.Setting{}, true, "not confined"},
		{sandbox.None, true, "not confined"},
		{sandbox.Setting{Mode: sandbox.ModeLandlock, Network: true}, true, "can reach the network"},
		{sandbox.Setting{Mode: sandbox.ModeLandlock}, false, "cannot reach any network"},
	} {
		sh := sandboxedShell(t, t.TempDir(), tc.s)
		c := sh.Capabilities()
		if c.ReachesNetwork != tc.network || c.External != tc.network || !c.RunsCommands || !c.ModifiesWorkspace || !c.ReadsWorkspace {
			t.Errorf("%+v: capabilities %+v", tc.s, c)
		}
		if d := sh.Spec().Description; !strings.Contains(d, tc.says) {
			t.Errorf("%+v: description does not say %q: %s", tc.s, tc.says, d)
		}
	}
}

// TestShellSandboxed runs escapes through the tool itself: confined they
// fail, the private TMPDIR works and is gone after the call; the same
// commands unconfined get out.
func TestShellSandboxed(t *testing.T) {
	requireSandbox(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			b, _ := io.ReadAll(c)
			c.Close()
			got <- string(b)
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())

	for _, s := range []sandbox.Setting{
		{Mode: sandbox.ModeLandlock, Namespaces: true}, {Mode: sandbox.ModeLandlock}, sandbox.None,
	} {
		confined := s.Confined()
		if s.Namespaces && !sandbox.Probe().Namespaces {
			t.Logf("this machine refuses the sandbox's namespaces: %+v not tried", s)
			continue
		}
		root := t.TempDir()
		ws := filepath.Join(root, "ws")
		if err := os.Mkdir(ws, 0o700); err != nil {
			t.Fatal(err)
		}
		sh := sandboxedShell(t, ws, s)
		out, _ := runShell(t, sh, `echo in > f; echo t > "$TMPDIR/t" && echo "tmp=$TMPDIR"; echo out > ../outside; bash -c 'echo secret > /dev/tcp/127.0.0.1/`+port+`'; true`)
		if b, err := os.ReadFile(filepath.Join(ws, "f")); err != nil || string(b) != "in\n" {
			t.Errorf("%+v: writing in the workspace failed: %v\n%s", confined, err, out)
		}
		_, err := os.Stat(filepath.Join(root, "outside"))
		if escaped := err == nil; escaped == confined {
			t.Errorf("confined=%v: wrote outside the workspace: %v\n%s", confined, escaped, out)
		}
		var sent bool
		select {
		case <-got:
			sent = true
		case <-time.After(map[bool]time.Duration{true: 300 * time.Millisecond, false: 5 * time.Second}[confined]):
		}
		if sent == confined {
			t.Errorf("confined=%v: reached the loopback listener: %v\n%s", confined, sent, out)
		}
		if !confined {
			continue
		}
		tmp := ""
		for _, line := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(line, "tmp="); ok {
				tmp = v
			}
		}
		if tmp == "" || tmp == "/tmp" {
			t.Fatalf("TMPDIR is not private: %q\n%s", tmp, out)
		}
		if _, err := os.Stat(tmp); err == nil {
			t.Errorf("the private TMPDIR %s outlived the call", tmp)
		}
	}
}

// TestShellEgressCapabilities: with an egress allowlist the shell brings
// content in (External) but sends data out only when a host on the list
// is marked as able to receive it; its description names the hosts.
func TestShellEgressCapabilities(t *testing.T) {
	t.Parallel()
	s := sandbox.Setting{Mode: sandbox.ModeLandlock, Namespaces: true, Egress: true}
	for _, sends := range []bool{false, true} {
		ws, err := NewWorkspace(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		sh := NewShell(ws, Options{Sandbox: s, AllowDomains: []string{"pypi.org", "*.npmjs.org"}, EgressSends: sends})
		c := sh.Capabilities()
		if !c.External || c.ReachesNetwork != sends {
			t.Errorf("sends %v: capabilities %+v", sends, c)
		}
		if d := sh.Spec().Description; !strings.Contains(d, "pypi.org, *.npmjs.org") || !strings.Contains(d, "403") {
			t.Errorf("the description does not name the hosts: %s", d)
		}
		ws.Close()
	}
}
