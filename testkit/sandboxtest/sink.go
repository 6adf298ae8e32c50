package sandboxtest

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// SinkMain is the exfiltration server of the end-to-end scripts: in -dir
// it listens on TCP and UDP on loopback (their ports in tcp.port and
// udp.port, written once listening) and on the Unix socket sink.sock,
// and appends whatever reaches it, one line per connection or datagram
// (a DNS query as its name), to the file received. It runs until killed.
func SinkMain(args []string) int {
	fs := flag.NewFlagSet("sink", flag.ContinueOnError)
	dir := fs.String("dir", "", "the directory of the sink's files")
	if err := fs.Parse(args); err != nil || *dir == "" {
		return 2
	}
	var mu sync.Mutex
	rec, err := os.OpenFile(filepath.Join(*dir, "received"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	add := func(b []byte) {
		mu.Lock()
		defer mu.Unlock()
		_, _ = rec.Write(append([]byte(strings.TrimSpace(string(b))), '\n'))
	}
	serve := func(l net.Listener) {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(io.LimitReader(c, 1<<16))
				add(b)
			}()
		}
	}
	tl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ul, err := net.Listen("unix", filepath.Join(*dir, "sink.sock"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	go serve(tl)
	go serve(ul)
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if name := dnsName(buf[:n]); name != "" {
				add([]byte("dns " + name))
			} else {
				add(buf[:n])
			}
		}
	}()
	for name, a := range map[string]net.Addr{"tcp.port": tl.Addr(), "udp.port": pc.LocalAddr()} {
		_, port, _ := net.SplitHostPort(a.String())
		if err := os.WriteFile(filepath.Join(*dir, name), []byte(port), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	select {}
}
