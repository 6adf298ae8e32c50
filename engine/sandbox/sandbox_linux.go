package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

var (
	probeOnce sync.Once
	probed    Support
)

func probe() Support {
	probeOnce.Do(func() {
		probed = Support{Landlock: landlockABI(ll.LandlockGetABIVersion()), Seccomp: seccomp.Supported()}
		if probed.hasLandlock() && os.Getenv(NoNamespacesEnv) != "1" && os.Getenv(trialEnv) != "1" {
			probed.Namespaces, probed.NamespacesWhy = cachedTrial(tryNamespaces)
		}
	})
	return probed
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

// Landlock's rights, as the helper grants them.
const (
	// readDir is listing a directory (on the way to a hole).
	readDir = landlock.AccessFSSet(ll.AccessFSReadDir)
	// writeNoDevices is RWDirs' rights without making character or block
	// devices: a device node made in the workspace would open the device
	// (a loop device, the raw disk) whatever Landlock says of its target.
	writeNoDevices = landlock.AccessFSSet(ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile |
		ll.AccessFSReadDir | ll.AccessFSRemoveDir | ll.AccessFSRemoveFile | ll.AccessFSMakeDir |
		ll.AccessFSMakeReg | ll.AccessFSMakeSock | ll.AccessFSMakeFifo | ll.AccessFSMakeSym | ll.AccessFSTruncate)
)

// landlockRules are the helper's grants. With namespaces the denied paths
// are already hidden by mounts, so everything may be read; without, reads
// (and writes) are granted around them (Holes).
func landlockRules(p policy) []landlock.Rule {
	var rules []landlock.Rule
	readDirs := func(paths ...string) landlock.FSRule {
		r := landlock.RODirs(paths...)
		if p.Network {
			// From ABI 9 on, connecting to a path-named Unix socket is a
			// file-system right; with the network on it is allowed.
			r = r.WithResolveUnix()
		}
		return r
	}
	if p.Namespaces || len(p.Deny) == 0 {
		rules = append(rules, readDirs("/"))
	} else {
		// Entries enumerated a moment ago may be gone (a busy /tmp):
		// what no longer exists needs no rule.
		g := Holes("/", p.Deny)
		rules = append(rules, readDirs(g.Dirs...).IgnoreIfMissing(), landlock.ROFiles(g.Files...).IgnoreIfMissing(),
			landlock.PathAccess(readDir, g.Lists...).IgnoreIfMissing())
	}
	for _, d := range []string{p.Workspace, p.Tmp} {
		if p.Namespaces {
			rules = append(rules, landlock.PathAccess(writeNoDevices, d))
			continue
		}
		g := Holes(d, p.Deny)
		rules = append(rules, landlock.PathAccess(writeNoDevices, g.Dirs...).IgnoreIfMissing(), landlock.RWFiles(g.Files...).IgnoreIfMissing())
	}
	return append(rules, landlock.RWFiles(devices...).IgnoreIfMissing())
}

// Bits of a mknod mode: S_IFCHR is set in both a character and a block
// device's type (S_IFBLK is S_IFCHR|S_IFDIR), and in no other type mknod
// makes (regular file, FIFO, socket).
const sIFCHR = 0o20000

// seccompFilter refuses with EPERM what no command needs and what would
// let it reach past the sandbox: making a device node, the kernel's key
// rings, chroot; without namespaces, changing the priority, limits or CPU
// affinity of any process but the caller (mecha is visible then); and
// with the network cut, creating a socket of any family (socket(2), and
// io_uring_setup(2), which can create sockets of its own).
func seccompFilter(p policy) seccomp.Filter {
	deny := func(names ...string) seccomp.SyscallGroup {
		return seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: names}
	}
	argNot0 := func(name string, arg uint32) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: name, Conditions: []seccomp.Condition{{Argument: arg, Operation: seccomp.NotEqual, Value: 0}}}
	}
	groups := []seccomp.SyscallGroup{
		deny("add_key", "request_key", "keyctl", "chroot"),
		{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
			{Name: "mknod", Conditions: []seccomp.Condition{{Argument: 1, Operation: seccomp.BitsSet, Value: sIFCHR}}},
			{Name: "mknodat", Conditions: []seccomp.Condition{{Argument: 2, Operation: seccomp.BitsSet, Value: sIFCHR}}},
		}},
	}
	if !p.Namespaces {
		groups = append(groups, seccomp.SyscallGroup{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
			// setpriority(which, who): only PRIO_PROCESS (0) of itself (0).
			argNot0("setpriority", 0), argNot0("setpriority", 1),
			argNot0("prlimit64", 0), argNot0("sched_setaffinity", 0),
			argNot0("sched_setscheduler", 0), argNot0("sched_setparam", 0), argNot0("sched_setattr", 0),
			argNot0("ioprio_set", 0), argNot0("ioprio_set", 1),
		}})
	}
	switch {
	case p.Proxy != "":
		groups = append(groups, egressSocketRules(), deny("io_uring_setup"))
	case !p.Network:
		groups = append(groups, deny("socket", "io_uring_setup"))
	}
	return seccomp.Filter{
		NoNewPrivs: true,
		Flag:       seccomp.FilterFlagTSync,
		Policy:     seccomp.Policy{DefaultAction: seccomp.ActionAllow, Syscalls: groups},
	}
}

// capSysPtrace is CAP_SYS_PTRACE, dropped from the command's bounding set:
// as root it would read mecha's /proc/PID/environ (the provider keys)
// past mecha being undumpable (see protectSelf).
const capSysPtrace = 19

func confineAndExec(p policy) int {
	// The capability drops and Landlock below apply to this thread alone
	// (seccomp, with TSYNC, to all): the command is started or exec'd
	// from it, and inherits them. Keep this goroutine on it.
	runtime.LockOSThread()
	if p.Forward {
		return forwarder(p)
	}
	if !probeKernel().hasLandlock() {
		fmt.Fprintln(os.Stderr, "mecha sandbox: this kernel has no Landlock; the command was not run")
		return 126
	}
	for _, d := range []string{p.Workspace, p.Tmp} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			fmt.Fprintf(os.Stderr, "mecha sandbox: %s is not a directory; the command was not run\n", d)
			return 126
		}
	}
	if p.Namespaces {
		if err := buildView(p); err != nil {
			fmt.Fprintf(os.Stderr, "mecha sandbox: namespaces: %v; the command was not run\n", err)
			return 126
		}
	}
	env := os.Environ()
	rules := landlockRules(p)
	if p.Proxy != "" {
		if !p.Namespaces || p.Network {
			fmt.Fprintln(os.Stderr, "mecha sandbox: the egress allowlist needs namespaces and the network cut; the command was not run")
			return 126
		}
		port, err := startForwarder(p)
		if err != nil {
			fmt.Fprintf(os.Stderr, "mecha sandbox: egress: %v; the command was not run\n", err)
			return 126
		}
		env = proxyEnv(env, port)
		rules = append(rules, landlock.ConnectTCP(uint16(port)))
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: capabilities: %v; the command was not run\n", err)
		return 126
	}
	if err := unix.Prctl(unix.PR_CAPBSET_DROP, capSysPtrace, 0, 0, 0); err != nil && err != unix.EPERM {
		fmt.Fprintf(os.Stderr, "mecha sandbox: capabilities: %v; the command was not run\n", err)
		return 126
	}
	if err := restrictThread(landlockConfig(p.Network), rules...); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: landlock: %v; the command was not run\n", err)
		return 126
	}
	if err := seccomp.LoadFilter(seccompFilter(p)); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: seccomp: %v; the command was not run\n", err)
		return 126
	}
	if p.Probe {
		fmt.Println(trialOK)
		return 0
	}
	if p.Lifeline {
		return supervise(p, env)
	}
	err := syscall.Exec(p.argv[0], p.argv, env)
	fmt.Fprintf(os.Stderr, "mecha sandbox: %s: %v\n", p.argv[0], err)
	return 127
}

// restrictThread enforces c with rules on the calling thread, which
// confineAndExec has locked and from which the command is started (or
// exec'd): the command inherits that thread's Landlock domain, as it
// inherits its capability sets. Config.Restrict would enforce it on every
// thread of the helper through libpsx, which signals each thread in turn
// and waits for it; that took about a millisecond of every confined call
// (perf: the helper's sched_yield and /proc/PID/task reads). The helper's
// other threads run none of the command's code: they wait for the
// command, reap orphans and watch the lifeline. go-landlock documents
// this use (Config.NewRulesetFD, then landlock_restrict_self on the
// thread that execs).
func restrictThread(c landlock.Config, rules ...landlock.Rule) error {
	fd, flags, err := c.NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return fmt.Errorf("nothing to enforce with Landlock ABI %d", landlockABI(ll.LandlockGetABIVersion()))
	}
	defer unix.Close(fd)
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	if err := ll.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// probeKernel is what the kernel has, without the namespace trial (the
// helper is already in its namespaces, or told to go without).
func probeKernel() Support {
	return Support{Landlock: landlockABI(ll.LandlockGetABIVersion()), Seccomp: seccomp.Supported()}
}

var protectOnce sync.Once

// protectSelf guards mecha's environment, once, before its first
// confined command. Without namespaces a command sees mecha in /proc, and
// a process of the same user (root included, even without the
// CAP_SYS_PTRACE the helper drops) may read mecha's /proc/PID/environ,
// which the kernel reads from mecha's initial environment block: the
// provider keys. Go copied that block at start-up and never reads it
// again, so mecha blanks it. (mecha's /proc/PID/mem, which would show the
// copies, opens only to a tracer, which Landlock refuses a sandboxed
// process.) With namespaces mecha is not in the command's /proc at all;
// the blanking is harmless there. mecha is left dumpable: an undumpable
// mecha could not write its child's uid_map as an unprivileged user.
func protectSelf() {
	protectOnce.Do(func() { _ = blankEnviron() })
}

// blankEnviron overwrites mecha's initial environment block (env_start to
// env_end in /proc/self/stat) with zero bytes, through /proc/self/mem.
func blankEnviron() error {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return err
	}
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return errors.New("sandbox: /proc/self/stat has no command name")
	}
	// After the name come fields 3 on; env_start and env_end are 50 and 51.
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 49 {
		return errors.New("sandbox: /proc/self/stat has no environment bounds")
	}
	start, err1 := strconv.ParseUint(f[47], 10, 64)
	end, err2 := strconv.ParseUint(f[48], 10, 64)
	if err1 != nil || err2 != nil || end <= start || end-start > 1<<24 {
		return errors.New("sandbox: /proc/self/stat: bad environment bounds")
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	_, err = mem.WriteAt(make([]byte, end-start), int64(start))
	return err
}
