package cmdkit

import (
	"fmt"
	"os"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/spf13/cobra"
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

// SandboxFlags are --sandbox and --sandbox-network for the commands that
// run tools outside a run (tool call, rerun, mcp serve): the shell is
// confined there by default as in a run.
type SandboxFlags struct {
	Mode    string
	Network bool
}

// Register adds the flags to cmd.
func (s *SandboxFlags) Register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&s.Mode, "sandbox", sandbox.ModeLandlock, "confine the shell tool: landlock (write only in the workspace and a private TMPDIR; where the kernel has it) or none")
	cmd.Flags().BoolVar(&s.Network, "sandbox-network", false, "let the sandboxed shell reach the network (it is cut by default)")
}

// Validate refuses a mode that does not exist.
func (s *SandboxFlags) Validate() error {
	if _, err := sandbox.ParseMode(s.Mode); err != nil {
		return Usagef("--sandbox must be %s or %s, not %q", sandbox.ModeLandlock, sandbox.ModeNone, s.Mode)
	}
	return nil
}

// Apply sets rc's sandbox to what this kernel enforces of the flags,
// saying so in one line on Err when it enforces less, so that a record
// never claims more.
func (s *SandboxFlags) Apply(e *Env, rc *transcript.Config) {
	mode := s.Mode
	if mode == "" {
		mode = sandbox.ModeLandlock
	}
	got, note := e.Sandbox(mode, s.Network)
	if note != "" && e.Err != nil {
		fmt.Fprintln(e.Err, "mecha: "+note)
	}
	rc.Sandbox, rc.SandboxNetwork = got.Mode, got.Network
}
