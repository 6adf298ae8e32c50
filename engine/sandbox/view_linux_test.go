package sandbox_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestNamespaceView: with namespaces the command is the first process of
// its own PID namespace, its /proc shows none of the host's processes
// (mecha's included), its /dev holds only the few devices a command uses,
// and the root is mounted read-only (so even a write Landlock would refuse
// fails with EROFS first).
func TestNamespaceView(t *testing.T) {
	requireLayer(t, confined)
	b := newBox(t)
	script := `echo "pid=$$"
ls /proc | grep -E '^[0-9]+$' | tr '\n' ' '; echo
ls -A /dev | tr '\n' ' '; echo
test -e /proc/$MECHA_PID && echo "mecha visible" || echo "mecha hidden"
grep -E ' / ' /proc/self/mountinfo | head -1
cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d ' \n'; echo
`
	out, err := b.run(t, confined, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "pid=1" {
		t.Errorf("the shell is %q, want the first process of its namespace", lines[0])
	}
	if pids := strings.Fields(lines[1]); len(pids) > 4 {
		t.Errorf("/proc shows %d processes: %v", len(pids), pids)
	}
	if got, want := lines[2], "fd full null ptmx pts random stderr stdin stdout tty urandom zero "; got != want && got != strings.Replace(want, "tty ", "", 1) {
		t.Errorf("/dev holds %q, want %q", got, want)
	}
	if lines[3] != "mecha hidden" {
		t.Errorf("mecha's /proc/%d: %s", os.Getpid(), lines[3])
	}
	if !strings.Contains(lines[4], " ro,") && !strings.Contains(lines[4], " ro ") {
		t.Errorf("the root is not mounted read-only: %s", lines[4])
	}
	if lines[5] != "lo" {
		t.Errorf("with the network cut, the interfaces are %q, want only lo", lines[5])
	}
	t.Log(fmt.Sprint(lines))
}

// TestNamespaceEndsAll: with namespaces, what a command leaves running in
// the background dies when the command ends (the shell is the first
// process of its PID namespace), even a process that left the group; the
// control without namespaces leaves it running.
func TestNamespaceEndsAll(t *testing.T) {
	for _, l := range layers {
		t.Run(l.name, func(t *testing.T) {
			requireLayer(t, l.s)
			b := newBox(t)
			late := b.ws + "/late"
			if out, err := b.run(t, l.s, `setsid sh -c 'sleep 1; echo x > late' >/dev/null 2>&1 & echo started`); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			time.Sleep(2 * time.Second)
			if got, want := exists(late), !l.s.Namespaces; got != want {
				t.Errorf("the background process wrote after the command ended: %v, want %v", got, want)
			}
		})
	}
}
