package sandbox_test

import (
	"os"
	"testing"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/testkit/sandboxtest"
)

// TestMain makes the test binary double as mecha's sandbox helper and as
// the network client the escape tests run inside the sandbox.
func TestMain(m *testing.M) {
	if sandbox.IsHelper(os.Args[1:]) {
		os.Exit(sandbox.Helper(os.Args[1:]))
	}
	if sandboxtest.IsProbe(os.Args[1:]) {
		os.Exit(sandboxtest.Probe(os.Args[1:]))
	}
	os.Exit(m.Run())
}
