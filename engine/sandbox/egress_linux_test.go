package sandbox_test

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/sandbox/egress"
	"github.com/mecha-agent/mecha/testkit/sandboxtest"
)

// TestEgress: a command allowed 127.0.0.1 by name reaches a loopback HTTP
// server through mecha's proxy (HTTP_PROXY set for it); a name not on the
// list gets the proxy's 403, by plain http and by CONNECT; a direct TCP
// connection, a UDP datagram and a raw socket are refused; the proxy
// logs each connection. The control: the same server is reached directly
// unconfined.
func TestEgress(t *testing.T) {
	requireLayer(t, confined)
	have(t, "curl")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello-from-the-allowed-host")
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(ln.Addr().String())

	var mu sync.Mutex
	var logged []string
	e, err := egress.Start([]string{"127.0.0.1", "*.allowed.test"}, func(s string) {
		mu.Lock()
		logged = append(logged, s)
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	sink := sandboxtest.Listen(t, "tcp", "127.0.0.1:0")
	udp := sandboxtest.ListenUDP(t)

	b := newBox(t)
	b.proxy = e.Socket
	s := sandbox.Setting{Mode: sandbox.ModeLandlock, Namespaces: true, Egress: true}
	script := `echo "allowed: $(curl -s -m 5 http://127.0.0.1:` + port + `/)"
echo "by another name: $(curl -s -m 5 -o /dev/null -w '%{http_code}' http://localhost:` + port + `/)"
echo "connect: $(curl -s -m 5 -o /dev/null -w '%{http_connect}' https://example.com/ 2>&1)"
$PROBE tcp ` + sink.Addr + ` direct-secret && echo "direct: sent"
$PROBE udp ` + udp.Addr + ` udp-secret && echo "udp: sent"
python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print("raw: made")' 2>/dev/null
true`
	out, err := b.run(t, s, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"allowed: hello-from-the-allowed-host", "by another name: 403", "connect: 403"} {
		if !strings.Contains(out, want) {
			t.Errorf("want %q in:\n%s", want, out)
		}
	}
	for _, bad := range []string{"direct: sent", "udp: sent", "raw: made"} {
		if strings.Contains(out, bad) {
			t.Errorf("%q: a direct socket got out:\n%s", bad, out)
		}
	}
	if sink.Received("direct-secret", 300*time.Millisecond) || udp.Received("udp-secret", 100*time.Millisecond) {
		t.Error("a direct socket reached a listener outside")
	}
	mu.Lock()
	got := strings.Join(logged, "\n")
	mu.Unlock()
	for _, want := range []string{"GET 127.0.0.1:" + port + " allowed", "GET localhost:" + port + " refused", "CONNECT example.com:443 refused"} {
		if !strings.Contains(got, want) {
			t.Errorf("the proxy's log lacks %q:\n%s", want, got)
		}
	}
	// The control: unconfined, the direct connection gets out.
	if out, err := b.run(t, sandbox.None, "$PROBE tcp "+sink.Addr+" direct-secret"); err != nil || !sink.Received("direct-secret", 5*time.Second) {
		t.Fatalf("the control failed: %v\n%s", err, out)
	}
}

// TestAllowed: exact names, "*.host" subdomains (not host itself), case
// and a trailing dot ignored.
func TestAllowed(t *testing.T) {
	t.Parallel()
	list := []string{"pypi.org", "*.npmjs.org", "127.0.0.1"}
	for host, want := range map[string]bool{
		"pypi.org": true, "PyPI.org.": true, "files.pypi.org": false, "registry.npmjs.org": true,
		"npmjs.org": false, "evilnpmjs.org": false, "127.0.0.1": true, "localhost": false, "": false,
	} {
		if got := sandbox.Allowed(list, host); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", host, got, want)
		}
	}
}
