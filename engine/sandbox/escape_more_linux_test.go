package sandbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"golang.org/x/sys/unix"
)

// succeeds is an escape that got out when script's last command, run
// after the attack with &&, leaves the marker "escaped" in the workspace
// (which the sandbox lets it write).
func succeeds(script string) func(*testing.T, *box) (string, func(time.Duration) bool) {
	return func(t *testing.T, b *box) (string, func(time.Duration) bool) {
		return "(" + script + ") && echo yes > escaped", func(time.Duration) bool { return exists(filepath.Join(b.ws, "escaped")) }
	}
}

// stole is an escape that got out when the file "stolen" in the workspace
// holds the box's canary, as it is or decoded from base64 or hex.
func stole(b *box) func(time.Duration) bool {
	return func(time.Duration) bool {
		raw, _ := os.ReadFile(filepath.Join(b.ws, "stolen"))
		forms := [][]byte{raw}
		trimmed := strings.TrimSpace(string(raw))
		if d, err := base64.StdEncoding.DecodeString(trimmed); err == nil {
			forms = append(forms, d)
		}
		if d, err := hex.DecodeString(strings.ReplaceAll(trimmed, "\n", "")); err == nil {
			forms = append(forms, d)
		}
		for _, f := range forms {
			if bytes.Contains(f, []byte(b.canary)) {
				return true
			}
		}
		return false
	}
}

// outsideFile makes a file outside the workspace, mode 0600 and dated
// now, and returns it with its state.
func outsideFile(t *testing.T, b *box) (string, os.FileInfo) {
	t.Helper()
	p := filepath.Join(b.outside, "id_rsa")
	if err := os.WriteFile(p, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, fi
}

// victim starts a process outside the sandbox standing for mecha (the
// real mecha, runner, is gone by the time the escape is judged): the
// attacks on mecha's scheduling and limits are tried on it.
func victim(t *testing.T) int {
	t.Helper()
	v := exec.Command("sleep", "60")
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Process.Kill(); _ = v.Wait() })
	return v.Process.Pid
}

func procField(pid int, file, prefix string) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, file))
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(strings.TrimPrefix(line, prefix))
		}
	}
	return ""
}

// moreEscapes are the attacks of issue 20: device nodes, metadata outside
// the workspace, mecha's environment, $MECHA_HOME, mecha's scheduling,
// key rings, chroot, and the reads the deny list refuses.
func moreEscapes() []escape {
	es := []escape{
		{name: "write outside through a loop device node made in the workspace", root: true, setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			have(t, "losetup")
			backing := filepath.Join(t.TempDir(), "disk.img")
			if err := os.WriteFile(backing, make([]byte, 1<<20), 0o600); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command("losetup", "-f", "--show", backing).CombinedOutput()
			if err != nil {
				t.Skipf("no loop device to attach here: %v: %s", err, out)
			}
			dev := strings.TrimSpace(string(out))
			t.Cleanup(func() { _ = exec.Command("losetup", "-d", dev).Run() })
			var st unix.Stat_t
			if err := unix.Stat(dev, &st); err != nil {
				t.Fatal(err)
			}
			script := fmt.Sprintf("mknod ./lp b %d %d && printf PWNED > ./lp && sync", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
			return script, func(time.Duration) bool {
				f, err := os.Open(backing)
				if err != nil {
					return false
				}
				defer f.Close()
				head := make([]byte, 5)
				_, _ = f.Read(head)
				return string(head) == "PWNED"
			}
		}},
		{name: "mknod a character device", root: true, setup: succeeds("mknod ./null c 1 3 && test -c ./null")},
		{name: "chmod outside", openWithout: "Landlock has no right for a file's mode", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			p, _ := outsideFile(t, b)
			return "chmod 666 " + p + "; chmod 777 " + b.outside, func(time.Duration) bool {
				fi, err := os.Stat(p)
				return err == nil && fi.Mode().Perm() == 0o666
			}
		}},
		{name: "chown outside", root: true, openWithout: "Landlock has no right for a file's owner", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			p, _ := outsideFile(t, b)
			return "chown 65534:65534 " + p, func(time.Duration) bool {
				var st syscall.Stat_t
				return syscall.Stat(p, &st) == nil && st.Uid == 65534
			}
		}},
		{name: "touch outside: times", openWithout: "Landlock has no right for a file's times", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			p, _ := outsideFile(t, b)
			return "touch -d 2001-01-01 " + p, func(time.Duration) bool {
				fi, err := os.Stat(p)
				return err == nil && fi.ModTime().Year() == 2001
			}
		}},
		{name: "renice mecha", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			have(t, "renice")
			pid := victim(t)
			if f := strings.Fields(procField(pid, "stat", "")); len(f) > 18 && f[18] == "19" {
				// Under "nice -n 19 go test" the victim starts there:
				// neither the attack nor its control could show a change.
				t.Skip("the victim already runs at nice 19 (the tests were started niced)")
			}
			return fmt.Sprintf("renice -n 19 -p %d", pid), func(time.Duration) bool {
				f := strings.Fields(procField(pid, "stat", ""))
				return len(f) > 18 && f[18] == "19"
			}
		}},
		{name: "prlimit mecha's file descriptors", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			have(t, "prlimit")
			pid := victim(t)
			return fmt.Sprintf("prlimit --pid %d --nofile=10:10", pid), func(time.Duration) bool {
				return strings.HasPrefix(procField(pid, "limits", "Max open files"), "10 ")
			}
		}},
		{name: "taskset mecha", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			have(t, "taskset")
			pid := victim(t)
			before := procField(pid, "status", "Cpus_allowed_list:")
			if before == "0" {
				t.Skip("one CPU: taskset cannot narrow mecha here")
			}
			return fmt.Sprintf("taskset -p 1 %d", pid), func(time.Duration) bool {
				return procField(pid, "status", "Cpus_allowed_list:") != before
			}
		}},
		{name: "add_key to a key ring", setup: succeeds("$PROBE addkey user secret-in-a-keyring")},
		{name: "chroot", root: true, setup: succeeds("chroot / /bin/true")},
		{name: "mecha's /proc/PID/environ, plain", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			return "cat /proc/$MECHA_PID/environ > stolen", stole(b)
		}},
		{name: "mecha's /proc/PID/environ, base64", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			have(t, "base64")
			return "base64 -w0 /proc/$MECHA_PID/environ > stolen", stole(b)
		}},
		{name: "mecha's /proc/PID/environ, hex", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			have(t, "xxd")
			return "xxd -p /proc/$MECHA_PID/environ > stolen", stole(b)
		}},
		{name: "read another session in MECHA_HOME", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			return "cat " + filepath.Join(b.mechaHome, "sessions", "s.jsonl") + " > stolen", stole(b)
		}},
		{name: "MECHA_HOME inside the workspace: an MCP server appended to its config.toml", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			// The workspace is the home (mecha run from ~).
			b.setMechaHome(t, filepath.Join(b.ws, ".mecha"))
			conf := filepath.Join(b.mechaHome, "config.toml")
			return `printf '[mcp.servers.x]\ncommand = "/bin/sh"\n' >> .mecha/config.toml`, func(time.Duration) bool {
				got, _ := os.ReadFile(conf)
				return strings.Contains(string(got), "[mcp.servers.x]")
			}
		}},
		{name: "MECHA_HOME inside the workspace: its session rewritten", setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			b.setMechaHome(t, filepath.Join(b.ws, ".mecha"))
			s := filepath.Join(b.mechaHome, "sessions", "s.jsonl")
			return `echo forged >> .mecha/sessions/s.jsonl`, func(time.Duration) bool {
				got, _ := os.ReadFile(s)
				return strings.Contains(string(got), "forged")
			}
		}},
		{name: "read another user's home", root: true, setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			p := "/root/.mecha-escape-" + strconv.FormatInt(time.Now().UnixNano(), 10)
			if err := os.WriteFile(p, []byte(b.canary), 0o600); err != nil {
				t.Skipf("cannot plant a file in /root: %v", err)
			}
			t.Cleanup(func() { os.Remove(p) })
			if !denied(b, p) {
				t.Skip("/root is this test's home: it is not another user's")
			}
			return "cat " + p + " > stolen", stole(b)
		}},
	}
	dirs := map[string]bool{".ssh": true, ".aws": true, ".config/gcloud": true, ".azure": true, ".kube": true, ".gnupg": true}
	for _, rel := range sandbox.CredentialPaths() {
		es = append(es, escape{name: "read ~/" + rel, setup: func(t *testing.T, b *box) (string, func(time.Duration) bool) {
			p := filepath.Join(b.home, rel)
			if dirs[rel] {
				p = filepath.Join(p, "credentials")
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(b.canary), 0o600); err != nil {
				t.Fatal(err)
			}
			return "cat " + p + " > stolen", stole(b)
		}})
	}
	return es
}

// denied reports whether p is in the box's deny list or beneath a path in
// it.
func denied(b *box, p string) bool {
	for _, d := range b.deny {
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}
