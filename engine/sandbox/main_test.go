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
	err = cmd.Run()
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
