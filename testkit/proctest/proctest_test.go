//go:build unix

package proctest

import (
	"os"
	"os/exec"
	"testing"
)

func TestGone(t *testing.T) {
	t.Parallel()
	if Gone(os.Getpid()) {
		t.Error("this process reported gone")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	cmd.Wait() // reaped: the pid no longer exists
	if !Gone(pid) {
		t.Errorf("a reaped child %d not reported gone", pid)
	}
}
