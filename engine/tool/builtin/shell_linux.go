package builtin

import "syscall"

// setParentDeathSignal has the kernel SIGKILL the shell when the thread
// that started it ends (runCommand keeps that thread for the life of the
// shell). It is the second of two layers: the orphan guard kills the whole
// group, this kills the shell even if the watcher was itself killed.
func setParentDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
