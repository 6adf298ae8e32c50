package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
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
// Network says whether commands may reach the network, and Namespaces
// whether the helper builds the command its own view of the system in new
// user, mount, PID and IPC namespaces (and a network namespace when the
// network is cut) under Landlock and seccomp; without them Landlock and
// seccomp are the only layers. It is what the config record stores as
// sandbox, sandbox_network and sandbox_namespaces.
type Setting struct {
	Mode       string
	Network    bool
	Namespaces bool
	// Egress says the network is cut but for an allowlist of hosts,
	// reached through mecha's proxy (see Egress): only with namespaces and
	// the network otherwise cut.
	Egress bool
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
	// Namespaces is whether the helper could build its view in new
	// user, mount, PID and IPC namespaces (a trial run, see Probe).
	Namespaces bool
	// NamespacesWhy is what the trial met when it failed (one line).
	NamespacesWhy string
}

// Probe returns what this kernel supports. The namespaces are tried for
// real, once per process: mecha's executable is started as the helper in
// new namespaces and builds the view a command would see (see
// NoNamespacesEnv for the switch that skips the trial).
func Probe() Support { return probe() }

// NoNamespacesEnv is the environment variable that makes Probe report no
// namespaces when set to 1, as a container that forbids user namespaces
// would: the shell is then confined by Landlock and seccomp alone. It is
// how the fallback is tried on a machine that has namespaces.
const NoNamespacesEnv = "MECHA_SANDBOX_NO_NAMESPACES"

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
	got := Setting{Mode: ModeLandlock, Network: want.Network, Namespaces: sup.Namespaces}
	var notes []string
	if want.Egress && !want.Network {
		if sup.Namespaces && sup.Seccomp {
			got.Egress = true
		} else {
			notes = append(notes, "the egress allowlist needs namespaces and seccomp; the network stays cut")
		}
	}
	if !want.Network && !sup.Seccomp {
		got.Network = true
		notes = append(notes, "this kernel has no seccomp; the shell is confined to the workspace but can reach the network (sandbox_network true)")
	}
	if !sup.Namespaces {
		notes = append(notes, "user namespaces are refused here; the shell is confined by Landlock and seccomp alone (sandbox_namespaces false: see SECURITY.md for what that leaves open)")
	}
	if len(notes) == 0 {
		return got, ""
	}
	return got, "sandbox: " + strings.Join(notes, "; ")
}

// View is what a confined command sees of the file system besides the
// root: the two directories it may write, and the paths it may not read.
type View struct {
	// Workspace and Tmp (the command's private TMPDIR) are writable.
	Workspace, Tmp string
	// Deny are absolute paths the command may not read (nor write): with
	// namespaces each is hidden under an empty read-only mount; without,
	// Landlock grants reads around them (see Holes). A path that does not
	// exist is skipped; one that holds the workspace or Tmp is too.
	Deny []string
	// Proxy is the egress proxy's socket (Egress.Socket) when the setting
	// has Egress.
	Proxy string
}

// Cmd is how to start a command under a setting: Path with Args (argv[0]
// included), and, on Linux, the namespaces its process is started in
// (Apply, on the command's SysProcAttr).
type Cmd struct {
	Path string
	Args []string
	// Namespaces says the process is started in new namespaces: it is the
	// first process of its PID namespace, so killing it kills every
	// process the command started, and it cannot join a process group
	// outside the namespace.
	Namespaces bool
	// Lifeline says the helper supervises the command: started with the
	// read end of a pipe as descriptor 3 (the first of ExtraFiles), whose
	// write end only mecha holds, it ends every process the command
	// started, those that left its process group or were orphaned
	// included, when the command ends, when that write end is closed, and
	// so when mecha dies however it dies; also on SIGTERM (the
	// parent-death signal to give it without namespaces, where a SIGKILL
	// would leave it no time to). Without namespaces it is the only thing
	// that finds what left the group.
	Lifeline bool
	network  bool
}

// Command returns how to run prog with args under s, in the view v. exe
// is mecha's executable, which knows HelperArg (see Helper); argv0 is the
// name it is started under.
func Command(s Setting, v View, exe, argv0, prog string, args ...string) (Cmd, error) {
	if !s.Confined() {
		return Cmd{Path: prog, Args: append([]string{prog}, args...)}, nil
	}
	if exe == "" {
		return Cmd{}, errors.New("sandbox: mecha's executable is unknown, so the helper cannot be started")
	}
	protectSelf()
	exe, _ = HelperExecutable(exe)
	p := policy{Network: s.Network, Namespaces: s.Namespaces, Workspace: v.Workspace, Tmp: v.Tmp, Deny: v.Deny, Lifeline: true}
	if s.Egress {
		if v.Proxy == "" {
			return Cmd{}, errors.New("sandbox: the egress allowlist has no proxy")
		}
		p.Proxy = v.Proxy
	}
	return helperCmd(p, exe, argv0, prog, args...)
}

// helperCmd is how to start the helper that applies p and then runs prog.
func helperCmd(p policy, exe, argv0, prog string, args ...string) (Cmd, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return Cmd{}, fmt.Errorf("sandbox: %w", err)
	}
	argv := []string{argv0, HelperArg, string(b), "--", prog}
	return Cmd{Path: exe, Args: append(argv, args...), Namespaces: p.Namespaces, Lifeline: p.Lifeline, network: p.Network}, nil
}

// IsHelper reports whether args (without the program name) start the
// helper.
func IsHelper(args []string) bool { return len(args) > 0 && args[0] == HelperArg }

// policy is what the helper applies; Command hands it over as JSON.
type policy struct {
	Network    bool     `json:"network"`
	Namespaces bool     `json:"namespaces"`
	Workspace  string   `json:"workspace"`
	Tmp        string   `json:"tmp"`
	Deny       []string `json:"deny,omitempty"`
	// Proxy is the egress proxy's Unix socket (see Egress): the helper
	// runs a forwarder to it on a loopback port of the command's network
	// namespace, and lets the command connect to that port only.
	Proxy string `json:"proxy,omitempty"`
	// Forward makes the helper that forwarder (started by the helper).
	Forward bool `json:"forward,omitempty"`
	// Probe makes the helper build the view and exit 0 without running
	// anything (see Probe).
	Probe bool `json:"probe,omitempty"`
	// Lifeline makes the helper run the program as its child and end
	// everything the program started when it ends (see Cmd.Lifeline).
	Lifeline bool     `json:"lifeline,omitempty"`
	argv     []string // the program and its arguments
}

func parseHelperArgs(args []string) (policy, error) {
	// HelperArg POLICY -- PROG ARGS...
	if len(args) < 4 || args[0] != HelperArg || args[2] != "--" {
		return policy{}, fmt.Errorf("usage: %s POLICY -- PROG [ARG...]", HelperArg)
	}
	var p policy
	dec := json.NewDecoder(strings.NewReader(args[1]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return policy{}, fmt.Errorf("policy: %v", err)
	}
	p.argv = args[3:]
	for _, d := range append([]string{p.Workspace, p.Tmp}, p.Deny...) {
		if !filepath.IsAbs(d) {
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
	if len(args) == 2 && args[0] == HelperArg && args[1] == "--digest" {
		// Which sandbox this executable holds (see HelperExecutable).
		fmt.Println(Digest())
		return 0
	}
	p, err := parseHelperArgs(args)
	if err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: %v\n", err)
		return 126
	}
	return confineAndExec(p)
}
