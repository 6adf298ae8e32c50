package sandboxtest

import (
	"os"
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

// AllowNoSandbox is the environment variable that lets the sandbox's tests
// skip on a kernel that cannot confine (MECHA_ALLOW_NO_SANDBOX=1). CI
// (.ci/run) does not set it: there a missing sandbox fails the suite.
const AllowNoSandbox = "MECHA_ALLOW_NO_SANDBOX"

// Require fails t unless sup (the code's own probe, sandbox.Probe) says
// this kernel can confine the shell: Landlock and seccomp. It skips
// instead only when AllowNoSandbox is set to 1, so that a probe that
// wrongly reports no Landlock cannot turn the escape tests into skips
// while production would run the shell unconfined.
func Require(t testing.TB, sup sandbox.Support) {
	t.Helper()
	if sup.Landlock >= 1 && sup.Seccomp {
		return
	}
	msg := "this kernel cannot sandbox (Landlock ABI %d, seccomp %v)"
	if os.Getenv(AllowNoSandbox) == "1" {
		t.Skipf(msg+"; skipped because %s=1", sup.Landlock, sup.Seccomp, AllowNoSandbox)
	}
	t.Fatalf(msg+": the sandbox's tests cannot run; set %s=1 to skip them on such a kernel", sup.Landlock, sup.Seccomp, AllowNoSandbox)
}
