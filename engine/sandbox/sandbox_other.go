//go:build !linux

package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

func probe() Support { return Support{} }

// Apply does nothing: only Linux has the namespaces.
func (c Cmd) Apply(*syscall.SysProcAttr) {}

func confineAndExec(policy) int {
	fmt.Fprintln(os.Stderr, "mecha sandbox: only Linux has Landlock; the command was not run")
	return 126
}

func protectSelf() {}
