package root

import "golang.org/x/sys/unix"

// hideProcess makes mecha's process undumpable: /proc/PID/environ, mem,
// maps and the like become readable, and the process traceable, only by
// root (CAP_SYS_PTRACE), not by the commands mecha runs as the same user.
// The keys in mecha's environment are then out of a command's reach,
// except when it runs as root; that is why tool results are also redacted
// (cmdkit.Secrets), which is the guarantee. It also means mecha leaves no
// core dump. Children get the flag back when they exec.
func hideProcess() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
