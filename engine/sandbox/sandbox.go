package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Modes of --sandbox.
const (
	ModeLandlock = "landlock"
	ModeNone     = "none"
)

// HelperArg is the hidden first argument that makes mecha's executable the
// sandbox helper (see Helper). It is not a command: nobody types it.
const HelperArg = "__mecha_sandbox_exec"

// Setting is what confines the shell: Mode is ModeLandlock or ModeNone,
// and Network says whether commands may reach the network. It is what the
// config record stores as sandbox and sandbox_network.
type Setting struct {
	Mode    string
	Network bool
}

// None is the setting of an unconfined shell.
var None = Setting{Mode: ModeNone, Network: true}

// Confined reports whether commands run in the sandbox.
func (s Setting) Confined() bool { return s.Mode == ModeLandlock }

// NetworkCut reports whether commands can reach no network.
func (s Setting) NetworkCut() bool { return s.Confined() && !s.Network }

// Support is what this kernel offers the sandbox.
type Support struct {
	// Landlock is the Landlock ABI version (0: none).
	Landlock int
	// Seccomp is whether seccomp filters can be installed.
	Seccomp bool
}

// Probe returns what this kernel supports.
func Probe() Support { return probe() }

// hasLandlock reports whether the kernel has Landlock at all: any ABI,
// the first included, confines. Resolve and the helper both ask it, so
// that what the setting claims and what the helper applies agree.
func (s Support) hasLandlock() bool { return s.Landlock >= 1 }

// ParseMode checks a --sandbox value.
func ParseMode(s string) (string, error) {
	switch s {
	case ModeLandlock, ModeNone:
		return s, nil
	}
	return "", fmt.Errorf("sandbox: unknown mode %q (want %s or %s)", s, ModeLandlock, ModeNone)
}

// Resolve returns the setting this kernel can enforce for the one asked
// for, and a one-line note when it is less than that ("" when it is not).
// The result never claims more than the helper will apply.
func Resolve(want Setting, sup Support) (Setting, string) {
	if want.Mode == ModeNone {
		return None, ""
	}
	if !sup.hasLandlock() {
		return None, "sandbox: this kernel has no Landlock; the shell runs unconfined (sandbox none, network on)"
	}
	got := Setting{Mode: ModeLandlock, Network: want.Network}
	if !want.Network && !sup.Seccomp {
		got.Network = true
		return got, "sandbox: this kernel has no seccomp; the shell is confined to the workspace but can reach the network (sandbox_network true)"
	}
	return got, ""
}

// Command returns the program and arguments (argv[0] included) that run
// prog with args under s, writable only in workspace and tmp. exe is
// mecha's executable, which knows HelperArg (see Helper); argv0 is the
// name it is started under.
func Command(s Setting, exe, argv0, workspace, tmp, prog string, args ...string) (string, []string, error) {
	if !s.Confined() {
		return prog, append([]string{prog}, args...), nil
	}
	if exe == "" {
		return "", nil, errors.New("sandbox: mecha's executable is unknown, so the helper cannot be started")
	}
	net := "0"
	if s.Network {
		net = "1"
	}
	argv := []string{argv0, HelperArg, net, workspace, tmp, "--", prog}
	return exe, append(argv, args...), nil
}

// IsHelper reports whether args (without the program name) start the
// helper.
func IsHelper(args []string) bool { return len(args) > 0 && args[0] == HelperArg }

// policy is what the helper applies.
type policy struct {
	network        bool
	workspace, tmp string
	argv           []string // the program and its arguments
}

func parseHelperArgs(args []string) (policy, error) {
	// HelperArg NET WORKSPACE TMP -- PROG ARGS...
	if len(args) < 6 || args[0] != HelperArg || args[4] != "--" {
		return policy{}, fmt.Errorf("usage: %s 0|1 WORKSPACE TMP -- PROG [ARG...]", HelperArg)
	}
	p := policy{workspace: args[2], tmp: args[3], argv: args[5:]}
	switch args[1] {
	case "0":
	case "1":
		p.network = true
	default:
		return policy{}, fmt.Errorf("network must be 0 or 1, not %q", args[1])
	}
	for _, d := range []string{p.workspace, p.tmp} {
		if !strings.HasPrefix(d, "/") {
			return policy{}, fmt.Errorf("%q is not an absolute path", d)
		}
	}
	return p, nil
}

// Helper is the helper's whole life: args are the process's arguments
// without the program name, starting with HelperArg. It confines the
// process and execs the program; it returns only when that fails, with
// the exit status to end with (126: not confined, 127: not executed),
// having said why on standard error. The command never runs unconfined.
func Helper(args []string) int {
	p, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: %v\n", err)
		return 126
	}
	return confineAndExec(p)
}
