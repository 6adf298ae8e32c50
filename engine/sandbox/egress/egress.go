// Package egress is the allowlist proxy of a confined shell that may reach
// only some hosts (see Egress). It runs in mecha, never in the sandbox's
// helper, so that the helper (cmd/mecha-sandbox) links no net/http.
package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/engine/sandbox"
)

// Egress is the allowlist proxy of a confined command that may reach only
// some hosts: an HTTP proxy (CONNECT for https, absolute URLs for plain
// http) listening on a Unix socket, the only way out of the command's
// network namespace (the helper runs a forwarder there from a loopback
// port to the socket, and sets HTTP_PROXY and HTTPS_PROXY to it). It
// allows exactly the hosts it was given, and the subdomains of those
// written "*.host"; every other request gets a 403 that says why. Each
// connection, allowed or refused, is reported to Log.
//
// It is hand-written on net/http rather than built on elazarl/goproxy:
// what it needs (a decision before any dial, a 403 with a reason for
// CONNECT too, a Unix-socket listener, one log line per connection) is a
// hundred lines, and goproxy's man-in-the-middle machinery is not wanted.
type Egress struct {
	// Socket is the Unix socket's path (in a private directory).
	Socket string

	allow []string
	log   func(string)
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	ln    net.Listener
	srv   *http.Server
	dir   string
	wg    sync.WaitGroup
}

// Start starts the proxy for the hosts allow (exact names, or
// "*.host" for host's subdomains) on a Unix socket in a new private
// directory; log receives one line per connection. Close stops it.
func Start(allow []string, log func(string)) (*Egress, error) {
	dir, err := os.MkdirTemp("", "mecha-egress-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: egress proxy: %w", err)
	}
	// The helper in its user namespace is mecha's own user: 0700 keeps
	// the socket from other users.
	e := &Egress{Socket: filepath.Join(dir, "proxy.sock"), allow: allow, log: log, dir: dir,
		dial: (&net.Dialer{Timeout: 30 * time.Second}).DialContext}
	if e.log == nil {
		e.log = func(string) {}
	}
	if e.ln, err = net.Listen("unix", e.Socket); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: egress proxy: %w", err)
	}
	e.srv = &http.Server{Handler: e, ReadHeaderTimeout: 30 * time.Second}
	e.wg.Add(1)
	go func() { defer e.wg.Done(); _ = e.srv.Serve(e.ln) }()
	return e, nil
}

// Close stops the proxy, ends its connections and removes its socket.
func (e *Egress) Close() error {
	err := e.srv.Close()
	e.wg.Wait()
	os.RemoveAll(e.dir)
	return err
}

// ServeHTTP serves one proxy request.
func (e *Egress) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	host, port := r.URL.Hostname(), r.URL.Port()
	if r.Method == http.MethodConnect {
		host, port, _ = net.SplitHostPort(r.Host)
	}
	if host == "" {
		http.Error(w, "mecha egress proxy: not a proxy request (no host)", http.StatusBadRequest)
		return
	}
	if port == "" {
		port = "80"
	}
	target := net.JoinHostPort(host, port)
	if !sandbox.Allowed(e.allow, host) {
		e.log(fmt.Sprintf("egress: %s %s refused (not in the allowlist)", r.Method, target))
		http.Error(w, fmt.Sprintf("mecha egress proxy: %s is not in the sandbox's allowlist (--allow-domain)", host), http.StatusForbidden)
		return
	}
	e.log(fmt.Sprintf("egress: %s %s allowed", r.Method, target))
	if r.Method == http.MethodConnect {
		e.tunnel(w, r, target)
		return
	}
	e.forward(w, r, target)
}

// tunnel answers a CONNECT: 200, then bytes both ways.
func (e *Egress) tunnel(w http.ResponseWriter, r *http.Request, target string) {
	up, err := e.dial(r.Context(), "tcp", target)
	if err != nil {
		http.Error(w, "mecha egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		up.Close()
		http.Error(w, "mecha egress proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	c, buf, err := hj.Hijack()
	if err != nil {
		up.Close()
		return
	}
	_, _ = c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	sandbox.Splice(c, buf.Reader, up)
}

// forward sends a plain http request on and copies the answer back.
func (e *Egress) forward(w http.ResponseWriter, r *http.Request, target string) {
	up, err := e.dial(r.Context(), "tcp", target)
	if err != nil {
		http.Error(w, "mecha egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	out.Close = true
	if err := out.Write(up); err != nil {
		http.Error(w, "mecha egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	resp, err := http.ReadResponse(bufio.NewReader(up), out)
	if err != nil {
		http.Error(w, "mecha egress proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}
