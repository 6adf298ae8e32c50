package sandbox

import (
	"fmt"
	"os"
	"runtime"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

func probe() Support {
	return Support{Landlock: landlockABI(ll.LandlockGetABIVersion()), Seccomp: seccomp.Supported()}
}

// landlockABI is the ABI version the kernel reported, 0 when it reported
// none (the call fails with -1 on a kernel without Landlock).
func landlockABI(v int, err error) int {
	if err != nil || v < 0 {
		return 0
	}
	return v
}

// devices are the character devices commands may write besides the
// workspace and the temporary directory: where output is thrown away.
var devices = []string{"/dev/null", "/dev/zero", "/dev/full"}

// landlockConfig is what Landlock restricts: every file-system right of
// the kernel's ABI, and with the network cut TCP bind and connect and
// connections to abstract Unix sockets outside the sandbox; signals to
// processes outside it always.
func landlockConfig(network bool) landlock.Config {
	c := landlock.Config{
		HandledAccessFS: landlock.V11.HandledAccessFS,
		Scoped:          ll.ScopeSignal,
	}
	if !network {
		c.HandledAccessNet = landlock.V11.HandledAccessNet
		c.Scoped |= ll.ScopeAbstractUnixSocket
	}
	return c.BestEffort()
}

func landlockRules(p policy) []landlock.Rule {
	read := landlock.RODirs("/")
	if p.network {
		// From ABI 9 on, connecting to a path-named Unix socket is a
		// file-system right; with the network on it is allowed.
		read = read.WithResolveUnix()
	}
	return []landlock.Rule{
		read,
		landlock.RWDirs(p.workspace, p.tmp),
		landlock.RWFiles(devices...).IgnoreIfMissing(),
	}
}

// networkFilter makes every socket(2) and io_uring_setup(2) (which can
// create sockets of its own) fail with EPERM.
func networkFilter() seccomp.Filter {
	return seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy: seccomp.Policy{
			DefaultAction: seccomp.ActionAllow,
			Syscalls: []seccomp.SyscallGroup{{
				Action: seccomp.ActionErrno,
				Names:  []string{"socket", "io_uring_setup"},
			}},
		},
	}
}

func confineAndExec(p policy) int {
	// The restrictions below apply to the thread that execs (and, for
	// Landlock and TSYNC, to all the others); keep this goroutine on it.
	runtime.LockOSThread()
	if !probe().hasLandlock() {
		fmt.Fprintln(os.Stderr, "mecha sandbox: this kernel has no Landlock; the command was not run")
		return 126
	}
	if err := landlockConfig(p.network).Restrict(landlockRules(p)...); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: landlock: %v; the command was not run\n", err)
		return 126
	}
	if !p.network {
		if err := seccomp.LoadFilter(networkFilter()); err != nil {
			fmt.Fprintf(os.Stderr, "mecha sandbox: seccomp: %v; the command was not run\n", err)
			return 126
		}
	}
	err := syscall.Exec(p.argv[0], p.argv, os.Environ())
	fmt.Fprintf(os.Stderr, "mecha sandbox: %s: %v\n", p.argv[0], err)
	return 127
}
