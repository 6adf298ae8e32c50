package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

// TestNamespaceView: with namespaces the command is the child of the
// helper, the first process of its own PID namespace; its /proc shows
// none of the host's processes (mecha's included), its /dev holds only
// the few devices a command uses, and the root is mounted read-only (so
// even a write Landlock would refuse fails with EROFS first).
func TestNamespaceView(t *testing.T) {
	requireLayer(t, confined)
	b := newBox(t)
	script := `echo "ppid=$PPID"
ls /proc | grep -E '^[0-9]+$' | tr '\n' ' '; echo
ls -A /dev | tr '\n' ' '; echo
test -e /proc/$MECHA_PID && echo "mecha visible" || echo "mecha hidden"
grep -E ' / ' /proc/self/mountinfo | head -1
cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' \n'; echo
`
	out, err := b.run(t, confined, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "ppid=1" {
		t.Errorf("the shell's parent is %q, want the helper, the first process of its namespace", lines[0])
	}
	// The helper, the shell, ls, grep and tr.
	if pids := strings.Fields(lines[1]); len(pids) > 5 {
		t.Errorf("/proc shows %d processes: %v", len(pids), pids)
	}
	if got, want := lines[2], "fd full null ptmx pts random stderr stdin stdout tty urandom zero "; got != want && got != strings.Replace(want, "tty ", "", 1) {
		t.Errorf("/dev holds %q, want %q", got, want)
	}
	if lines[3] != "mecha hidden" {
		t.Errorf("mecha's /proc/%d: %s", os.Getpid(), lines[3])
	}
	if !strings.Contains(lines[4], " ro,") && !strings.Contains(lines[4], " ro ") {
		t.Errorf("the root is not mounted read-only: %s", lines[4])
	}
	if lines[5] != "lo" {
		t.Errorf("with the network cut, the interfaces are %q, want only lo", lines[5])
	}
	t.Log(fmt.Sprint(lines))
}

// TestEndsAll: what a command leaves running in the background dies when
// the command ends, even a process that left the group (setsid), under
// both layers: the helper supervises the command (with namespaces the
// kernel kills its PID namespace as it exits; without, it kills its
// descendants as their subreaper). The control, the helper without its
// lifeline, leaves the escaped process running without namespaces.
func TestEndsAll(t *testing.T) {
	eachSupervision(t, func(t *testing.T, l layer, unsupervised bool) {
		b := newBox(t)
		late := b.ws + "/late"
		cmd := b.command(t, l.s, `setsid sh -c 'sleep 1; echo x > late' >/dev/null 2>&1 & echo started`, unsupervised)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if got, want := appears(late, unsupervised && !l.s.Namespaces, 2*time.Second), unsupervised && !l.s.Namespaces; got != want {
			t.Errorf("the background process wrote after the command ended: %v, want %v", got, want)
		}
	})
}

// appears reports whether the file p exists: after quiet (when it must
// not appear: a process that was not killed writes it by then), or as soon
// as it does within a minute (when it must: a loaded machine may take
// longer than the process's own sleep to run it).
func appears(p string, expected bool, quiet time.Duration) bool {
	if !expected {
		time.Sleep(quiet)
		return exists(p)
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if exists(p) {
			return true
		}
	}
	return false
}

// TestEndsWithMecha: mecha SIGKILLed while a command runs (the runner
// plays mecha) takes down the command and all it started, a process that
// left the group and one orphaned included, under both layers. The
// control, the helper without its lifeline and parent-death signal, leaves
// them running. (The shell outlives them: without the helper it is the
// namespace's first process, whose end would kill them too.)
func TestEndsWithMecha(t *testing.T) {
	eachSupervision(t, func(t *testing.T, l layer, unsupervised bool) {
		b := newBox(t)
		cmd := b.command(t, l.s, `(sh -c 'sleep 2; echo x > orphan' &) ; setsid sh -c 'sleep 2; echo x > escaped' >/dev/null 2>&1 & echo started > started; sleep 10`, unsupervised)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(20 * time.Second); !exists(b.ws + "/started"); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				t.Fatal("the command did not start")
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		for _, f := range []string{"orphan", "escaped"} {
			if got, want := appears(b.ws+"/"+f, unsupervised, 3*time.Second), unsupervised; got != want {
				t.Errorf("%s wrote after mecha died: %v, want %v", f, got, want)
			}
		}
	})
}

// TestSideHelperRuns: a mecha with the small helper beside it starts that
// helper for a confined command (the shell's parent is named after the
// executable it runs: comm), under both layers, and the command is
// confined by it (a write outside the workspace is refused); without it,
// mecha starts itself.
func TestSideHelperRuns(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b0, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		for _, withSide := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/side=%v", l.name, withSide), func(t *testing.T) {
				requireLayer(t, l.s)
				t.Setenv("XDG_CACHE_HOME", t.TempDir())
				dir := t.TempDir()
				names := []string{"mecha"}
				if withSide {
					names = append(names, sandbox.SideHelperName)
				}
				for _, n := range names {
					if err := os.WriteFile(filepath.Join(dir, n), b0, 0o755); err != nil {
						t.Fatal(err)
					}
				}
				b := newBox(t)
				cmd := b.command(t, l.s, `cat /proc/$PPID/comm; (echo x > "$OUTSIDE/escaped") 2>/dev/null || echo refused`, false)
				cmd.Path = filepath.Join(dir, "mecha")
				cmd.Env = append(cmd.Env, "XDG_CACHE_HOME="+os.Getenv("XDG_CACHE_HOME"))
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				want := "mecha"
				if withSide {
					want = sandbox.SideHelperName
				}
				if got := strings.Fields(string(out)); len(got) != 2 || got[0] != want || got[1] != "refused" {
					t.Errorf("output %q, want the helper %q and the write refused", out, want)
				}
				if exists(b.outside + "/escaped") {
					t.Error("the command wrote outside the workspace")
				}
			})
		}
	}
}

// TestReapsOrphans: orphans of a long command are reaped as they end, not
// left as zombies until it ends, under both layers (the helper is the
// namespace's first process, or a subreaper); and the command's exit
// status and signal come back through the helper.
func TestReapsOrphans(t *testing.T) {
	for _, l := range layers {
		t.Run(l.name, func(t *testing.T) {
			requireLayer(t, l.s)
			b := newBox(t)
			// Twenty orphans that end at once; then count the zombies
			// whose parent is the helper (the shell's parent), for up to
			// ten seconds on a loaded machine.
			out, err := b.run(t, l.s, `for i in $(seq 20); do (true &) ; done; sleep 1
for try in $(seq 50); do
z=0; for f in /proc/[0-9]*/stat; do set -- $(cut -d')' -f2 "$f" 2>/dev/null); [ "$1" = Z ] && [ "$2" = "$PPID" ] && z=$((z+1)); done
[ "$z" = 0 ] && break; sleep 0.2; done; echo "zombies=$z"; exit 7`)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Errorf("exit: %v, want status 7\n%s", err, out)
			}
			if !strings.Contains(out, "zombies=0") {
				t.Errorf("the orphans were not reaped: %s", out)
			}
		})
	}
}

// TestCommandCapabilities: the command the helper starts holds no
// capability as a user other than root (the helper's CAP_SYS_ADMIN and
// CAP_NET_ADMIN, kept to build the view, are not passed on: the ambient
// set is cleared on the thread that starts it), runs with no_new_privs
// (it can gain none), and as root has CAP_SYS_PTRACE out of its bounding
// set (another user's helper may not drop it, lacking CAP_SETPCAP, and
// need not: the command holds no capability and can gain none). TestAsUnprivileged runs it as nobody;
// without the ambient clear, an unprivileged user's command holds
// CAP_SYS_ADMIN and CAP_NET_ADMIN (checked by hand).
func TestCommandCapabilities(t *testing.T) {
	for _, l := range layers {
		t.Run(l.name, func(t *testing.T) {
			requireLayer(t, l.s)
			b := newBox(t)
			out, err := b.run(t, l.s, `grep -E '^(Cap(Eff|Amb|Bnd)|NoNewPrivs):' /proc/self/status`)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			caps := map[string]uint64{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				k, v, _ := strings.Cut(line, ":")
				n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err != nil {
					t.Fatalf("%q: %v", line, err)
				}
				caps[k] = n
			}
			if len(caps) != 4 {
				t.Fatalf("capabilities not read: %q", out)
			}
			if caps["NoNewPrivs"] != 1 {
				t.Error("the command runs without no_new_privs")
			}
			if os.Getuid() == 0 && caps["CapBnd"]&(1<<19) != 0 {
				t.Errorf("CAP_SYS_PTRACE is in the command's bounding set: %x", caps["CapBnd"])
			}
			if os.Getuid() != 0 && (caps["CapEff"] != 0 || caps["CapAmb"] != 0) {
				t.Errorf("the command holds capabilities: effective %x, ambient %x", caps["CapEff"], caps["CapAmb"])
			}
		})
	}
}

// eachSupervision runs test, in parallel, under both layers with the
// helper supervising the command and without (the control of the tests
// that it ends what the command left behind).
func eachSupervision(t *testing.T, test func(t *testing.T, l layer, unsupervised bool)) {
	for _, l := range layers {
		for _, unsupervised := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/unsupervised=%v", l.name, unsupervised), func(t *testing.T) {
				t.Parallel()
				requireLayer(t, l.s)
				test(t, l, unsupervised)
			})
		}
	}
}
