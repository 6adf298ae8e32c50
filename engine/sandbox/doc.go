// Package sandbox confines the commands of the shell tool.
//
// mecha itself is never confined. The shell tool starts mecha's own
// executable again with the hidden first argument HelperArg (see Command);
// that helper process, before anything else, confines itself and then
// execs /bin/sh, so the confinement holds for the shell and everything it
// starts, and cannot be undone by them. The layers, each applied by the
// helper (Helper):
//
//   - Landlock, file system (ABI 1 and later): everything may be read and
//     executed; writing, creating, removing and renaming are allowed only
//     beneath the workspace and the command's private temporary directory,
//     plus the character devices /dev/null, /dev/zero and /dev/full.
//     Paths are resolved by the kernel, so a symlink or ".." that leads
//     out of the workspace leads out of what may be written too.
//   - Landlock, network (ABI 4 and later, only when the network is cut):
//     no TCP bind or connect on any port.
//   - Landlock, scopes (ABI 6 and later): no signal to a process outside
//     the sandbox; with the network cut, no connection to an abstract
//     Unix socket of a process outside it either.
//   - seccomp (only when the network is cut): socket(2) and
//     io_uring_setup(2) fail with EPERM, so no socket of any family can be
//     created at all: no TCP, UDP (and so no DNS), ICMP, raw, netlink or
//     Unix socket, whatever the Landlock ABI (Landlock covers UDP only from
//     ABI 10 and path-named Unix sockets only from ABI 9). socketpair(2)
//     still works: a pair connects only the two ends it creates.
//
// Resolve decides what a run can have on this kernel and says so when it
// is less than what was asked; the recorded configuration holds what
// Resolve returned, never the flag alone. The helper fails closed: when a
// layer it was told to apply cannot be applied, the command is not run.
package sandbox
