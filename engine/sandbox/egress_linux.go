package sandbox

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// startForwarder brings the namespace's loopback up and starts the
// forwarder (mecha's executable again, as the helper in Forward mode, in
// the same namespaces): it listens on a loopback port, confines itself
// and relays each connection to the proxy's socket. It returns the port.
func startForwarder(p policy) (int, error) {
	if err := loopbackUp(); err != nil {
		return 0, fmt.Errorf("bringing up lo: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	c, err := helperCmd(policy{Forward: true, Proxy: p.Proxy, Workspace: p.Workspace, Tmp: p.Tmp}, exe, "mecha", "/bin/true")
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(c.Path)
	cmd.Args, cmd.Stderr = c.Args, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	out.Close()
	port, perr := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || perr != nil || port <= 0 {
		_ = cmd.Process.Kill()
		return 0, fmt.Errorf("the forwarder did not start (%q)", line)
	}
	// It is the command's now: it dies with the namespace.
	_ = cmd.Process.Release()
	return port, nil
}

// loopbackUp sets lo up (a new network namespace's is down).
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// forwarder is the helper in Forward mode: it listens on 127.0.0.1 (any
// port), says which on standard output, confines itself (read-only file
// system but for connecting to the proxy's socket, no TCP connect or
// bind, no socket but a Unix one, none of what seccompFilter refuses
// anyone) and relays until the namespace ends.
func forwarder(p policy) int {
	ln, port, err := listenLoopback()
	if err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: forwarder: %v\n", err)
		return 126
	}
	if err := dropCaps(); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: forwarder: capabilities: %v\n", err)
		return 126
	}
	rules := []landlock.Rule{landlock.RODirs("/").WithResolveUnix()}
	if err := landlockConfig(false).Restrict(rules...); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: forwarder: landlock: %v\n", err)
		return 126
	}
	f := seccompFilter(policy{Namespaces: true, Network: true})
	f.Policy.Syscalls = append(f.Policy.Syscalls, seccomp.SyscallGroup{Action: seccomp.ActionErrno,
		NamesWithCondtions: []seccomp.NameWithConditions{{Name: "socket", Conditions: []seccomp.Condition{{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_UNIX}}}}},
		seccomp.SyscallGroup{Action: seccomp.ActionErrno, Names: []string{"io_uring_setup"}})
	if err := seccomp.LoadFilter(f); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: forwarder: seccomp: %v\n", err)
		return 126
	}
	fmt.Println(port)
	if err := forwardAll(ln, p.Proxy); err != nil {
		fmt.Fprintf(os.Stderr, "mecha sandbox: forwarder: %v\n", err)
		return 1
	}
	return 0
}

// The forwarder's sockets are made with golang.org/x/sys/unix, not package
// net: net links the C resolver (cgo) into the helper, which every
// confined shell call starts, and a dynamically linked helper takes about
// a millisecond longer to start (scripts/shell-cost.sh).

// listenLoopback listens on 127.0.0.1 at a port the kernel picks, and
// returns the socket and the port.
func listenLoopback() (fd, port int, err error) {
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("socket: %w", err)
	}
	if err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err == nil {
		err = unix.Listen(fd, unix.SOMAXCONN)
	}
	var sa unix.Sockaddr
	if err == nil {
		sa, err = unix.Getsockname(fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("listening on 127.0.0.1: %w", err)
	}
	return fd, sa.(*unix.SockaddrInet4).Port, nil
}

// forwardAll relays each connection accepted on the listening socket ln
// to the Unix socket sock, until accepting fails.
func forwardAll(ln int, sock string) error {
	for {
		c, _, err := unix.Accept4(ln, unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK)
		switch {
		case err == unix.EINTR || err == unix.ECONNABORTED:
			continue
		case err != nil:
			return fmt.Errorf("accept: %w", err)
		}
		go relay(os.NewFile(uintptr(c), "connection"), sock)
	}
}

// relay copies conn to the Unix socket sock and back, and closes both when
// either way ends.
func relay(conn *os.File, sock string) {
	defer conn.Close() // Splice closed it already, but for a failed connect
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return
	}
	if err := unix.Connect(fd, &unix.SockaddrUnix{Name: sock}); err != nil {
		unix.Close(fd)
		return
	}
	_ = unix.SetNonblock(fd, true)
	Splice(conn, conn, os.NewFile(uintptr(fd), "proxy"))
}

// egressSocketRules are what seccomp refuses of socket(2) when the
// command may reach the proxy's port: any family but IPv4 and IPv6, and
// any type but a stream (datagram 2, raw 3, RDM 4, seqpacket 5, DCCP 6 and
// packet 10 all have a bit of 6 set; SOCK_STREAM, 1, has none, nor have
// SOCK_NONBLOCK and SOCK_CLOEXEC).
func egressSocketRules() seccomp.SyscallGroup {
	return seccomp.SyscallGroup{Action: seccomp.ActionErrno, NamesWithCondtions: []seccomp.NameWithConditions{
		{Name: "socket", Conditions: []seccomp.Condition{
			{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_INET},
			{Argument: 0, Operation: seccomp.NotEqual, Value: unix.AF_INET6}}},
		{Name: "socket", Conditions: []seccomp.Condition{{Argument: 1, Operation: seccomp.BitsSet, Value: 6}}},
	}}
}

// proxyEnv is env with the proxy variables set to the forwarder, and
// those that would route around it (NO_PROXY) removed.
func proxyEnv(env []string, port int) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	u := fmt.Sprintf("http://127.0.0.1:%d", port)
	return append(out, "HTTP_PROXY="+u, "HTTPS_PROXY="+u, "http_proxy="+u, "https_proxy="+u)
}

// dropCaps empties the process's capability sets (the forwarder inherits
// the helper's, in the namespace) and its ambient set.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}
