package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// lifelineFD is the helper's descriptor of the lifeline: the read end of
// a pipe whose only write end mecha holds (see Cmd.Lifeline).
const lifelineFD = 3

// supervise runs the command as the helper's child instead of in its
// place, and ends every process the command started, however they left
// its process group or parent, when the command ends, when mecha closes
// the lifeline (the call timed out or was cancelled) and when mecha dies
// (the kernel closes the lifeline then, whatever killed mecha).
//
// With namespaces the helper is the first process of the command's PID
// namespace: when it exits the kernel kills everything in the namespace,
// so ending is exiting. Without, it is a child subreaper (orphans of the
// command are handed to it, not to init) and kills and reaps its
// descendants before it exits.
//
// The helper is under the command's seccomp filter (every thread) and, on
// the thread that starts the command and supervises it, its Landlock
// rules (see restrictThread); it is undumpable, so the command can
// neither trace it nor read its memory. It exits as the command did; a command killed by a
// signal is reported by the same signal where the helper can raise it on
// itself (not as the first process of a PID namespace, which ignores its
// own signals), else by exit status 128 plus the signal.
func supervise(p policy, env []string) int {
	lifeline := openLifeline()
	if !p.Namespaces {
		if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
			fmt.Fprintf(os.Stderr, "mecha sandbox: subreaper: %v; the command was not run\n", err)
			return 126
		}
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	// The end signals: mecha's parent-death signal (SIGTERM without
	// namespaces, so that the helper can clean up) and a plain request.
	ends := make(chan os.Signal, 1)
	signal.Notify(ends, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)

	// The ambient capabilities and the bounding set were cleared and
	// dropped on this thread only (confineAndExec locked it): the command
	// is forked from it, here, so that it inherits them as cleared.
	proc, err := os.StartProcess(p.argv[0], p.argv, &os.ProcAttr{Env: env, Files: []*os.File{os.Stdin, os.Stdout, os.Stderr}})
	if err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: %s: %v\n", p.argv[0], errors.Unwrap(err))
		return 127
	}
	// The reaper: as the namespace's first process, or a subreaper, the
	// helper is handed every orphan of the command, and reaps them as they
	// end (a long command would otherwise fill the process table with
	// zombies) until the command itself ends.
	done := make(chan syscall.WaitStatus, 1)
	go func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case errors.Is(err, syscall.EINTR):
			case err != nil:
				return // nothing left to wait for: the end is the lifeline's
			case pid == proc.Pid:
				done <- ws
				return
			}
		}
	}()
	cut := make(chan struct{})
	if lifeline != nil {
		go func() {
			_, _ = io.Copy(io.Discard, lifeline)
			close(cut)
		}()
	}
	select {
	case ws := <-done:
		endAll(p.Namespaces)
		return exitAs(ws, p.Namespaces)
	case <-cut:
	case <-ends:
	}
	endAll(p.Namespaces)
	return 128 + int(syscall.SIGKILL)
}

// openLifeline returns the lifeline, or nil when the helper was started
// without one (descriptor 3 is not a pipe): it is kept from the command.
func openLifeline() *os.File {
	var st unix.Stat_t
	if unix.Fstat(lifelineFD, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return nil
	}
	syscall.CloseOnExec(lifelineFD)
	return os.NewFile(lifelineFD, "lifeline")
}

// endAll kills every process the command started. With namespaces the
// helper's exit does it (the kernel kills the namespace); kill(-1) first
// spares waiting for that. Without, it kills its descendants (a process
// with SIGKILL pending cannot fork), reaps what dies, and goes on until no
// child is left: orphans of what it killed come to it as the subreaper.
func endAll(namespaces bool) {
	if namespaces {
		_ = syscall.Kill(-1, syscall.SIGKILL)
		return
	}
	self := os.Getpid()
	for {
		for _, pid := range descendants(self) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		if _, err := syscall.Wait4(-1, &ws, 0, nil); errors.Is(err, syscall.ECHILD) {
			return
		} else if err != nil && !errors.Is(err, syscall.EINTR) {
			return
		}
	}
}

// descendants are the processes under pid, read from /proc: children
// first, then theirs.
func descendants(pid int) []int {
	parent := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		id, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if pp, ok := ppid(filepath.Join("/proc", e.Name(), "stat")); ok {
			parent[pp] = append(parent[pp], id)
		}
	}
	var out []int
	queue := []int{pid}
	seen := map[int]bool{pid: true}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, c := range parent[p] {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
				queue = append(queue, c)
			}
		}
	}
	return out
}

// ppid reads the parent's pid from a /proc/PID/stat file: the second
// field after the command name, which is in parentheses and may hold any
// byte, ')' included.
func ppid(stat string) (int, bool) {
	b, err := os.ReadFile(stat)
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	n, err := strconv.Atoi(f[1])
	return n, err == nil
}

// exitAs ends the helper as the command ended: its exit status, or its
// signal (see supervise).
func exitAs(ws syscall.WaitStatus, namespaces bool) int {
	if !ws.Signaled() {
		return ws.ExitStatus()
	}
	switch sig := ws.Signal(); {
	case namespaces:
	case sig == syscall.SIGKILL, sig == syscall.SIGTERM, sig == syscall.SIGINT, sig == syscall.SIGHUP:
		// Signals the Go runtime ends a process by, once not notified
		// (others it would ignore, or turn into a crash report).
		signal.Reset(sig)
		_ = syscall.Kill(os.Getpid(), sig)
	}
	return 128 + int(ws.Signal())
}
