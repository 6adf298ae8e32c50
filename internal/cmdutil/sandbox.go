package cmdutil

import (
	"fmt"
	"os"

	"github.com/mecha-agent/mecha/sandbox"
)

// HelperName is the name mecha starts its sandbox helper under.
const HelperName = "mecha"

// Sandbox returns what confines the shell on this kernel for a mode
// ("" is the unconfined shell of commands that record no sandbox) and
// whether the network is to stay on, with a one-line note when the kernel
// enforces less than that ("" when it does not).
func (e *Env) Sandbox(mode string, network bool) (sandbox.Setting, string) {
	if mode == "" {
		mode = sandbox.ModeNone
	}
	sup := e.SandboxSupport
	if sup == nil {
		sup = sandbox.Probe
	}
	return sandbox.Resolve(sandbox.Setting{Mode: mode, Network: network}, sup())
}

// executable returns mecha's executable.
func (e *Env) executable() (string, error) {
	f := e.Executable
	if f == nil {
		f = os.Executable
	}
	p, err := f()
	if err != nil {
		return "", fmt.Errorf("sandbox: mecha's executable: %w", err)
	}
	return p, nil
}
