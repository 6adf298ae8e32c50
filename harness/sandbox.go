package harness

import (
	"fmt"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/record/transcript"
)

// HelperName is the name mecha starts its sandbox helper under.
const HelperName = "mecha"

// Sandbox returns what confines the shell on this kernel for a mode
// ("" is the unconfined shell of commands that record no sandbox) and
// whether the network is to stay on, with a one-line note when the kernel
// enforces less than that ("" when it does not).
func (w *World) Sandbox(mode string, network bool) (sandbox.Setting, string) {
	if mode == "" {
		mode = sandbox.ModeNone
	}
	sup := w.SandboxSupport
	if sup == nil {
		sup = sandbox.Probe
	}
	return sandbox.Resolve(sandbox.Setting{Mode: mode, Network: network}, sup())
}

// self returns mecha's executable.
func (w *World) self() (string, error) {
	p, err := w.executable()
	if err != nil {
		return "", fmt.Errorf("sandbox: mecha's executable: %w", err)
	}
	return p, nil
}

// lowerSandbox lowers rc's sandbox to what this kernel enforces of it,
// saying so in one line on the World's Err when that is less, so that a
// record never claims more.
func lowerSandbox(w *World, rc *transcript.Config) {
	got, note := w.Sandbox(rc.Sandbox, rc.SandboxNetwork)
	if note != "" {
		fmt.Fprintln(w.errw(), "mecha: "+note)
	}
	rc.Sandbox, rc.SandboxNetwork = got.Mode, got.Network
}
