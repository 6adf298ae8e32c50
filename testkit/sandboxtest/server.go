package sandboxtest

import (
	"bytes"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Sink is a local server that keeps whatever reaches it: the exfiltration
// server of the escape tests.
type Sink struct {
	mu   sync.Mutex
	got  bytes.Buffer
	Addr string // host:port, a socket path, or an abstract name
}

func (s *Sink) add(b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got.Write(b)
	s.got.WriteByte('\n')
}

// Received reports whether want reached the sink within wait.
func (s *Sink) Received(want string, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		s.mu.Lock()
		ok := strings.Contains(s.got.String(), want)
		s.mu.Unlock()
		if ok || time.Now().After(deadline) {
			return ok
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Listen starts a stream sink on network ("tcp", "unix") and address,
// closed when the test ends. An abstract Unix name starts with "@".
func Listen(t testing.TB, network, address string) *Sink {
	t.Helper()
	l, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	s := &Sink{Addr: l.Addr().String()}
	if network == "unix" {
		s.Addr = strings.TrimPrefix(address, "@")
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				b, _ := io.ReadAll(c)
				s.add(b)
			}()
		}
	}()
	return s
}

// ListenUDP starts a datagram sink on loopback; a DNS query's name is
// kept with its labels joined by dots.
func ListenUDP(t testing.TB) *Sink {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s := &Sink{Addr: c.LocalAddr().String()}
	go func() {
		buf := make([]byte, 65536)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			b := append([]byte(nil), buf[:n]...)
			s.add(b)
			if name := dnsName(b); name != "" {
				s.add([]byte(name))
			}
		}
	}()
	return s
}

// dnsName returns the question name of a DNS query ("" if b is not one).
func dnsName(b []byte) string {
	if len(b) < 13 {
		return ""
	}
	var labels []string
	for i := 12; i < len(b) && b[i] != 0; {
		n := int(b[i])
		if i+1+n > len(b) {
			return ""
		}
		labels = append(labels, string(b[i+1:i+1+n]))
		i += 1 + n
	}
	return strings.Join(labels, ".")
}
