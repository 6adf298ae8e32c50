//go:build unix

// Package proctest helps tests that check no process is left behind: it
// tells a process that is gone from one that still runs (tests only).
package proctest

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Gone reports whether pid no longer runs: it does not exist, or it is a
// zombie nobody has reaped yet (a container's init may never reap it).
func Gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// Without /proc (not Linux) a process that answers signals runs.
		_, noProc := os.Stat("/proc/self")
		return noProc == nil && errors.Is(err, os.ErrNotExist)
	}
	// The state follows the parenthesised command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}
