package sandbox_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/testkit/sandboxtest"
	"golang.org/x/sys/unix"
)

// runnerEnv makes the test binary a stand-in for mecha (see runner).
const runnerEnv = "SANDBOX_TEST_RUN"

// TestMain makes the test binary double as mecha's sandbox helper, as
// the network client the escape tests run inside the sandbox, and as the
// stand-in for mecha that starts a command (runner).
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args[1:]) {
		os.Exit(sandbox.Helper(os.Args[1:]))
	}
	if sandboxtest.IsProbe(os.Args[1:]) {
		os.Exit(sandboxtest.Probe(os.Args[1:]))
	}
	if r := os.Getenv(runnerEnv); r != "" {
		os.Exit(runner(r))
	}
	os.Exit(m.Run())
}

// run is what the runner is asked to do.
type run struct {
	Setting sandbox.Setting
	View    sandbox.View
	Script  string
	Env     []string
	// Unsupervised takes the lifeline out of the helper's policy and
	// starts it with no parent-death signal: the control of the tests of
	// what outlives a command or mecha.
	Unsupervised bool
}

// runner plays mecha: a process with a secret in its own environment (the
// test gives it one) that starts script with /bin/sh under a setting, as
// the shell tool does (sandbox.Command, then Apply), with the environment
// asked for and MECHA_PID, its own pid, the target of the attacks on
// mecha. It exits as the command did.
func runner(spec string) int {
	var r run
	if err := json.Unmarshal([]byte(spec), &r); err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}
	if r.Setting.Namespaces {
		// Undumpable, as mecha makes itself (cli/root): a user other than
		// root then starts the helper in namespaces only through
		// Cmd.Start. (Not without namespaces: the controls of the attacks
		// on mecha's /proc files play a mecha that can be read.)
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			fmt.Fprintln(os.Stderr, "runner:", err)
			return 2
		}
	}
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}
	c, err := sandbox.Command(r.Setting, r.View, exe, "sandbox.test", "/bin/sh", "-c", r.Script)
	if err != nil {
		fmt.Fprintln(os.Stderr, "runner:", err)
		return 2
	}
	cmd := &exec.Cmd{Path: c.Path, Args: c.Args, Dir: r.View.Workspace, Stdout: os.Stdout, Stderr: os.Stderr,
		Env:         append(r.Env, fmt.Sprintf("MECHA_PID=%d", os.Getpid())),
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}}
	c.Apply(cmd.SysProcAttr)
	if r.Unsupervised && c.Lifeline {
		var p map[string]any
		if err := json.Unmarshal([]byte(cmd.Args[2]), &p); err != nil {
			fmt.Fprintln(os.Stderr, "runner:", err)
			return 2
		}
		delete(p, "lifeline")
		b, _ := json.Marshal(p)
		cmd.Args[2], c.Lifeline, cmd.SysProcAttr.Pdeathsig = string(b), false, 0
	}
	if c.Lifeline {
		// As the shell tool does: the helper's lifeline, whose write end
		// the runner holds until it exits; without namespaces the helper
		// cleans up on SIGTERM rather than dying at once.
		lr, lw, err := os.Pipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, "runner:", err)
			return 2
		}
		defer lw.Close()
		cmd.ExtraFiles = []*os.File{lr}
		if !c.Namespaces {
			cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
		}
	}
	err = c.Start(cmd.Start)
	if err == nil {
		err = cmd.Wait()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	fmt.Fprintln(os.Stderr, "runner:", err)
	return 2
}
