//go:build linux

package builtin

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/testkit/proctest"
)

// The test binary doubles as a stand-in for mecha: with helperEnv set, it
// runs one shell call in the workspace helperWorkspaceEnv names, and the
// test SIGKILLs it mid-call.
const (
	helperEnv          = "MECHA_BUILTIN_TEST_SHELL_HELPER" // "guarded" or "unguarded"
	helperWorkspaceEnv = "MECHA_BUILTIN_TEST_SHELL_WORKSPACE"
)

// orphanCommand starts a grandchild of the caller (sleep, started by the
// shell) and writes the pids of the shell and the sleep, the shell's last.
const orphanCommand = `sleep 1000 & echo $! > sleep.pid; echo $$ > sh.pid; wait`

func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args[1:]) {
		os.Exit(sandbox.Helper(os.Args[1:]))
	}
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(shellHelper(mode, os.Getenv(helperWorkspaceEnv)))
	}
	os.Exit(m.Run())
}

// shellHelper runs orphanCommand through the shell tool, with or without
// the orphan guard; it returns only if the call does.
func shellHelper(mode, dir string) int {
	ws, err := NewWorkspace(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opts := Options{ShellTimeout: time.Hour, noOrphanGuard: mode == "unguarded"}
	if mode == "sandboxed" {
		opts.Sandbox = sandbox.Setting{Mode: sandbox.ModeLandlock}
		opts.Self, _ = os.Executable()
		opts.SelfName = "builtin.test"
	}
	res, err := NewShell(ws, opts).Run(context.Background(), []byte(fmt.Sprintf(`{"command":%q}`, orphanCommand)))
	fmt.Fprintln(os.Stderr, "the call returned:", res.Content, err)
	return 1
}

// TestShellDiesWithMecha kills the process running a shell call with
// SIGKILL, which no handler can catch, and checks that the shell and the
// sleep it started die with it. The control, with the guard off, shows
// that they would otherwise be left running, re-parented to init.
func TestShellDiesWithMecha(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"guarded", "unguarded", "sandboxed"} {
		guarded := mode != "unguarded"
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			if mode == "sandboxed" {
				requireSandbox(t)
			}
			dir := t.TempDir()
			var stderr bytes.Buffer
			helper := exec.Command(os.Args[0], "-test.run=^$")
			helper.Env = append(os.Environ(), helperEnv+"="+mode, helperWorkspaceEnv+"="+dir)
			helper.Stderr = &stderr
			if err := helper.Start(); err != nil {
				t.Fatal(err)
			}
			shPid := waitPidFile(t, filepath.Join(dir, "sh.pid"), helper, &stderr)
			sleepPid := waitPidFile(t, filepath.Join(dir, "sleep.pid"), helper, &stderr)
			t.Cleanup(func() {
				_ = syscall.Kill(shPid, syscall.SIGKILL)
				_ = syscall.Kill(sleepPid, syscall.SIGKILL)
			})

			if err := helper.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = helper.Wait()

			if guarded {
				waitGoneWithin(t, shPid, 30*time.Second)
				waitGoneWithin(t, sleepPid, 30*time.Second)
				return
			}
			// Nothing else would kill them: without the guard both are
			// still there once the helper is reaped.
			for _, pid := range []int{shPid, sleepPid} {
				if proctest.Gone(pid) {
					t.Errorf("without the guard, process %d died with its parent: this test cannot tell the guard works", pid)
				}
			}
		})
	}
}

// waitPidFile waits (at most 30s) for a pid file to hold a whole line, and
// fails early when the helper has exited instead.
func waitPidFile(t *testing.T, path string, helper *exec.Cmd, stderr *bytes.Buffer) int {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			return readPid(t, path)
		}
		if helper.ProcessState != nil {
			break
		}
	}
	_ = helper.Process.Kill()
	t.Fatalf("%s was not written; helper stderr: %s", filepath.Base(path), stderr.String())
	return 0
}

// waitGoneWithin polls until pid no longer runs, failing after d.
func waitGoneWithin(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	for deadline := time.Now().Add(d); !proctest.Gone(pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("process %d outlived the process that started it", pid)
			return
		}
	}
}
