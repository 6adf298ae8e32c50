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

// Start runs start: only Linux has the namespaces.
func (c Cmd) Start(start func() error) error { return start() }

func confineAndExec(policy) int {
	fmt.Fprintln(os.Stderr, "mecha sandbox: only Linux has Landlock; the command was not run")
	return 126
}

func protectSelf() {}
