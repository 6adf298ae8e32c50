package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Apply sets, on the SysProcAttr the command is started with, the
// namespaces the helper starts in: new user, mount, PID and IPC
// namespaces, and a network namespace (loopback only, and down) when the
// network is cut. The user namespace maps mecha's user and group to
// themselves (as root: every id to itself, so root inside keeps the
// workspace's files of other owners writable), and setgroups is denied.
func (c Cmd) Apply(attr *syscall.SysProcAttr) {
	if !c.Namespaces {
		return
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWIPC
	if !c.network {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	uid, gid := os.Getuid(), os.Getgid()
	if uid == 0 {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	} else {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	}
	if uid == 0 && gid == 0 {
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
	} else {
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	}
	attr.GidMappingsEnableSetgroups = false
	if uid != 0 {
		// An unprivileged user's helper would lose its capabilities in
		// the namespace at exec (it is not root there): it keeps
		// CAP_SYS_ADMIN to build the view and CAP_NET_ADMIN to bring up
		// the loopback (egress), and clears them before it runs the
		// command (see confineAndExec).
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN}
	}
}

// Start runs start, the start of the helper's process, with mecha's
// process dumpable when the helper is started in namespaces by a user
// other than root. mecha makes itself undumpable (its /proc files and
// memory are then root's), and a child keeps that flag until it execs:
// the user could not write the child's uid_map and gid_map, which the
// kernel then also makes root's, and every start would fail. The flag is
// restored as soon as the maps are written (start returns after the
// child has been let go). A same-user process could read mecha's
// /proc/PID/environ only in that window, and the sandbox has blanked
// that environment block before the first confined command (protectSelf).
func (c Cmd) Start(start func() error) error {
	if !c.Namespaces || os.Getuid() == 0 {
		return start()
	}
	dumpMu.Lock()
	if dumpStarts == 0 {
		was, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		dumpWas = err != nil || was == 1
		if !dumpWas {
			_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
		}
	}
	dumpStarts++
	dumpMu.Unlock()
	defer func() {
		dumpMu.Lock()
		if dumpStarts--; dumpStarts == 0 && !dumpWas {
			_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
		}
		dumpMu.Unlock()
	}()
	return start()
}

// The starts under way that made mecha dumpable, and what it was before.
var (
	dumpMu     sync.Mutex
	dumpStarts int
	dumpWas    bool
)

// tryNamespaces starts mecha's executable as the helper in new namespaces,
// told to build a command's view in a scratch workspace and exit 0 without
// running anything: where the kernel (or a container's seccomp profile, or
// a mount it will not let a user namespace cover) refuses any of it, the
// trial fails and Resolve falls back to Landlock and seccomp alone. It
// reports whether the answer is definite (the trial was not cut short).
func tryNamespaces() (ok bool, why string, definite bool) {
	exe, err := os.Executable()
	if err != nil {
		return false, err.Error(), true
	}
	exe, _ = HelperExecutable(exe)
	dir, err := os.MkdirTemp("", "mecha-probe-")
	if err != nil {
		return false, err.Error(), false
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), trialTimeout)
	defer cancel()
	if err := runProbe(ctx, exe, dir); err != nil {
		return false, err.Error(), ctx.Err() == nil
	}
	return true, "", true
}

// trialTimeout bounds the namespace trial; one cut short by it (a machine
// too busy) counts as a refusal for this process only, not kept.
const trialTimeout = 10 * time.Second

// runProbe runs the helper's trial (policy.Probe) with the workspace and
// TMPDIR at dir.
func runProbe(ctx context.Context, exe, dir string) error {
	c, err := helperCmd(policy{Namespaces: true, Workspace: dir, Tmp: dir, Probe: true}, exe, "mecha", "/bin/true")
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, c.Path)
	cmd.Args, cmd.Dir = c.Args, dir
	// An executable that is not mecha (a test binary without the helper's
	// hook) must neither try again inside nor pass: the trial needs the
	// helper's own word.
	cmd.Env = append(os.Environ(), trialEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	c.Apply(cmd.SysProcAttr)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err = c.Start(cmd.Start)
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		return fmt.Errorf("%v: %s", err, out.String())
	}
	if !strings.Contains(out.String(), trialOK) {
		return fmt.Errorf("the helper did not answer the trial: %q", out.String())
	}
	return nil
}

// trialEnv marks the trial's process: Probe there claims no namespaces
// without a trial of its own. trialOK is the helper's answer.
const (
	trialEnv = "MECHA_SANDBOX_TRIAL"
	trialOK  = "mecha sandbox: trial ok"
)

// hostDevices are the device nodes the command's /dev holds, bound from
// the host's (a user namespace cannot make device nodes).
var hostDevices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// buildView builds, in the helper's new mount namespace (it is root of
// its user namespace and the first process of its PID namespace), what
// the command sees: every mount read-only and nosuid; the workspace and
// TMPDIR bound over themselves writable (nodev); each denied path hidden
// under an empty read-only tmpfs (a directory) or /dev/null (a file); a
// fresh /proc that shows only the namespace's processes; a /dev of its
// own with the few devices a command uses and a private devpts. Landlock
// (which the helper applies next) forbids a sandboxed process to mount or
// unmount, so none of it can be undone.
func buildView(p policy) error {
	if os.Getpid() != 1 {
		return errors.New("the helper is not the first process of a new PID namespace")
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("making / private: %w", err)
	}
	writable := []string{p.Workspace, p.Tmp}
	for _, d := range writable {
		if err := unix.Mount(d, d, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("binding %s: %w", d, err)
		}
	}
	for _, d := range p.Deny {
		if err := hide(d, writable); err != nil {
			return err
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mounting /proc: %w", err)
	}
	if err := buildDev(); err != nil {
		return err
	}
	ro := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", unix.AT_RECURSIVE, ro); err != nil {
		return fmt.Errorf("making / read-only: %w", err)
	}
	rw := &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY, Attr_set: unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID}
	for _, d := range writable {
		if err := unix.MountSetattr(unix.AT_FDCWD, d, 0, rw); err != nil {
			return fmt.Errorf("making %s writable: %w", d, err)
		}
	}
	// The working directory was the workspace beneath its bind: enter the
	// bind.
	return os.Chdir(cwd)
}

// hide covers the denied path d, unless it does not exist or holds a
// writable directory (the user chose to work there).
func hide(d string, writable []string) error {
	for _, w := range writable {
		if w == d || within(w, d) {
			return nil
		}
	}
	fi, err := os.Stat(d)
	if err != nil {
		return nil // nothing there to read (or to hide)
	}
	if fi.IsDir() {
		err = unix.Mount("tmpfs", d, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC|unix.MS_RDONLY, "size=4k,mode=0555")
	} else {
		err = unix.Mount("/dev/null", d, "", unix.MS_BIND, "")
	}
	if err != nil {
		return fmt.Errorf("hiding %s: %w", d, err)
	}
	return nil
}

// buildDev mounts a tmpfs over /dev holding hostDevices (each the host's
// node, cloned as a mount before the tmpfs covers them), a new devpts
// instance and the usual links.
func buildDev() error {
	trees := map[string]int{}
	for _, name := range hostDevices {
		fd, err := unix.OpenTree(unix.AT_FDCWD, "/dev/"+name, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
		if err != nil {
			continue // a device the host lacks is not offered
		}
		trees[name] = fd
	}
	defer func() {
		for _, fd := range trees {
			unix.Close(fd)
		}
	}()
	if err := unix.Mount("tmpfs", "/dev", "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "size=64k,mode=0755"); err != nil {
		return fmt.Errorf("mounting /dev: %w", err)
	}
	for name, fd := range trees {
		p := "/dev/" + name
		f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o666)
		if err != nil {
			return fmt.Errorf("/dev: %w", err)
		}
		f.Close()
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("/dev/%s: %w", name, err)
		}
	}
	if err := os.Mkdir("/dev/pts", 0o755); err != nil {
		return fmt.Errorf("/dev: %w", err)
	}
	if err := unix.Mount("devpts", "/dev/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mounting /dev/pts: %w", err)
	}
	for link, target := range map[string]string{
		"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0",
		"stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
	} {
		if err := os.Symlink(target, filepath.Join("/dev", link)); err != nil {
			return fmt.Errorf("/dev: %w", err)
		}
	}
	return nil
}
