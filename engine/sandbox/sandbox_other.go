//go:build !linux

package sandbox

import (
	"fmt"
	"os"
)

func probe() Support { return Support{} }

func confineAndExec(policy) int {
	fmt.Fprintln(os.Stderr, "mecha sandbox: only Linux has Landlock; the command was not run")
	return 126
}
