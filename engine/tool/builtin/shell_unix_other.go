//go:build unix && !linux

package builtin

import "syscall"

// setParentDeathSignal does nothing where there is no parent-death signal
// in SysProcAttr; the orphan guard alone kills the group when mecha dies.
func setParentDeathSignal(*syscall.SysProcAttr, syscall.Signal) {}
