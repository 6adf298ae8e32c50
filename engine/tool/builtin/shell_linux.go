package builtin

import "syscall"

// setParentDeathSignal has the kernel send sig to the process started
// when the thread that started it ends (runCommand keeps that thread for
// the life of the process). It is the second of two layers: the orphan
// guard kills the whole group (the sandbox's helper everything under it)
// when mecha's end of a pipe closes, this reaches the process even if the
// watcher was itself killed.
func setParentDeathSignal(attr *syscall.SysProcAttr, sig syscall.Signal) { attr.Pdeathsig = sig }
