package sandboxtest

import (
	"runtime"
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

// recorder is a testing.TB that notes whether the test failed or was
// skipped; like testing.T, both end the goroutine that calls them.
type recorder struct {
	testing.TB
	failed, skipped bool
}

func (r *recorder) Helper()               {}
func (r *recorder) Fatalf(string, ...any) { r.failed = true; runtime.Goexit() }
func (r *recorder) Skipf(string, ...any)  { r.skipped = true; runtime.Goexit() }

// TestRequire: a kernel that cannot sandbox fails the test unless
// MECHA_ALLOW_NO_SANDBOX=1 lets it skip; one that can passes.
func TestRequire(t *testing.T) {
	for _, tc := range []struct {
		name       string
		sup        sandbox.Support
		allow      string
		fail, skip bool
	}{
		{"full", sandbox.Support{Landlock: 7, Seccomp: true}, "", false, false},
		{"ABI 1", sandbox.Support{Landlock: 1, Seccomp: true}, "", false, false},
		{"no landlock", sandbox.Support{Seccomp: true}, "", true, false},
		{"no seccomp", sandbox.Support{Landlock: 7}, "", true, false},
		{"nothing", sandbox.Support{}, "", true, false},
		{"nothing, allowed", sandbox.Support{}, "1", false, true},
		{"nothing, other value", sandbox.Support{}, "yes", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(AllowNoSandbox, tc.allow)
			r := &recorder{TB: t}
			done := make(chan struct{})
			go func() {
				defer close(done)
				Require(r, tc.sup)
			}()
			<-done
			if r.failed != tc.fail || r.skipped != tc.skip {
				t.Errorf("Require(%+v) with %s=%q: failed %v, skipped %v; want %v, %v", tc.sup, AllowNoSandbox, tc.allow, r.failed, r.skipped, tc.fail, tc.skip)
			}
		})
	}
}
