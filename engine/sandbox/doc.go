// Package sandbox confines the commands of the shell tool.
//
// mecha itself is never confined. The shell tool starts mecha's own
// executable again with the hidden first argument HelperArg (see Command)
// and, when the setting has Namespaces, in new user, mount, PID and IPC
// namespaces, plus a network namespace when the network is cut (Cmd.Apply:
// a Go process cannot unshare a user namespace itself once its threads
// run, so the parent clones the helper into them). The helper, before
// anything else, builds the command's view, confines itself and then
// execs /bin/sh, so the confinement holds for the shell and everything it
// starts, and cannot be undone by them. The layers, each applied by the
// helper (Helper):
//
//   - Namespaces (buildView; where the kernel allows them): every mount
//     read-only and nosuid, so no file outside the workspace can be
//     written or change owner, mode or times, as root too; the workspace
//     and the command's private temporary directory bound over themselves
//     writable and nodev; each path of View.Deny hidden under an empty
//     read-only tmpfs or /dev/null; a fresh /proc showing only the
//     namespace's processes (mecha is not there); a /dev of its own with
//     null, zero, full, random, urandom, tty and a new devpts. The shell
//     is the first process of its PID namespace: when it ends or is
//     killed, or mecha dies (its parent-death signal), every process it
//     started dies too.
//   - Landlock, file system (ABI 1 and later): everything may be read and
//     executed; writing, creating, removing and renaming are allowed only
//     beneath the workspace and the temporary directory, never making a
//     device node there, plus the character devices /dev/null, /dev/zero
//     and /dev/full. Paths are resolved by the kernel, so a symlink or
//     ".." that leads out of the workspace leads out of what may be
//     written too. A sandboxed process may not mount or unmount, so the
//     view stays. Without namespaces the deny list is enforced here, by
//     granting reads around each denied path (Holes).
//   - Landlock, network (ABI 4 and later, only when the network is cut):
//     no TCP bind or connect on any port.
//   - Landlock, scopes (ABI 6 and later): no signal to a process outside
//     the sandbox; with the network cut, no connection to an abstract
//     Unix socket of a process outside it either.
//   - seccomp: mknod of a device, the key rings and chroot fail with
//     EPERM; without namespaces so do priority, limit and affinity
//     changes to any process but the caller; with the network cut,
//     socket(2) and io_uring_setup(2) too, so no socket of any family can
//     be created at all: no TCP, UDP (and so no DNS), ICMP, raw, netlink
//     or Unix socket, whatever the Landlock ABI (Landlock covers UDP only
//     from ABI 10 and path-named Unix sockets only from ABI 9).
//     socketpair(2) still works: a pair connects only the two ends it
//     creates.
//   - The egress allowlist (Setting.Egress, with namespaces only): the
//     helper brings up the namespace's loopback and starts a forwarder
//     (itself again, confined) from a loopback port to the Unix socket of
//     mecha's proxy (Egress), sets HTTP_PROXY and HTTPS_PROXY to it, lets
//     Landlock connect to that port only, and has seccomp refuse any
//     socket but an IPv4 or IPv6 stream. The proxy allows the listed hosts
//     and answers 403 to the rest, reporting each connection.
//   - CAP_SYS_PTRACE is dropped from the bounding set, and before its
//     first confined command mecha blanks the environment block its
//     /proc/PID/environ reads (protectSelf): without namespaces a process
//     of the same user may read that file.
//
// Probe tries the namespaces for real (the helper builds a view in a
// scratch directory and exits), once per kernel boot, user and mecha
// build. Resolve decides what a run can have on this kernel and says so
// in one line when it is less than what was asked; the recorded
// configuration holds what Resolve returned, never the flag alone. The
// helper fails closed: when a layer it was told to apply cannot be
// applied, the command is not run.
package sandbox
