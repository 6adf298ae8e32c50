package mcpcmd

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/mcp/mcpserve"
)

// TokenVar is the environment variable that may hold the bearer token of
// an HTTP listener.
const TokenVar = "MECHA_MCP_TOKEN"

// minToken is the shortest token mecha accepts from a file or TokenVar.
const minToken = 16

// Listen is how a command serves streamable HTTP: --http ADDR, loopback
// unless ADDR names a host, and what a listener reachable from other
// machines needs (--allow-remote, a bearer token).
type Listen struct {
	// Addr is --http's [HOST:]PORT; "" serves stdio.
	Addr string
	// AllowRemote lets Addr be an address other machines reach; it
	// requires a bearer token on every request.
	AllowRemote bool
	// TokenFile holds the bearer token (else TokenVar, else one is
	// generated when AllowRemote).
	TokenFile string
	// Rand is where a generated token comes from (nil: crypto/rand).
	Rand io.Reader
}

// listenHelp is the help the serving commands share about --http.
const listenHelp = `With --http the server listens on streamable HTTP, on loopback unless ADDR
names a host ("8080" and ":8080" are 127.0.0.1:8080), with the SDK's DNS
rebinding protection on; a loopback listener needs no token unless one is
given or --allow-remote is. An address other machines can reach (0.0.0.0,
[::], an interface's address, any host name but localhost) is refused
unless --allow-remote is given, and then every request must carry
"Authorization: Bearer TOKEN" (RFC 6750), as the MCP authorization
guidance expects of a remote server: a request without it, or with
another token, gets 401 and a WWW-Authenticate header. The token is read
from --token-file FILE, else from $MECHA_MCP_TOKEN (at least 16 characters
of A-Z a-z 0-9 - . _ ~ + /), else generated (32 random bytes) and printed
once on stderr. The traffic is plain HTTP, token included: across
machines, put the server behind an SSH tunnel or a TLS proxy.`

func (l *Listen) flags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&l.Addr, "http", "", "serve streamable HTTP on `ADDR` ([HOST:]PORT) instead of stdio")
	f.BoolVar(&l.AllowRemote, "allow-remote", false, "let --http listen on an address other machines reach, requiring a bearer token")
	f.StringVar(&l.TokenFile, "token-file", "", "require the bearer token held in `FILE` on every HTTP request")
}

// Validate refuses, as a usage error, what cannot be served: a malformed
// address, an address other machines reach without --allow-remote, and
// the remote flags without --http.
func (l *Listen) Validate() error {
	if l.Addr == "" {
		if l.AllowRemote || l.TokenFile != "" {
			return cmdkit.Usagef("--allow-remote and --token-file go with --http")
		}
		return nil
	}
	addr, err := listenAddr(l.Addr)
	if err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(addr)
	if !l.AllowRemote && !loopbackHost(host) {
		return cmdkit.Usagef("--http %s: other machines could reach it; give --allow-remote to serve them (a bearer token is then required), or listen on 127.0.0.1", addr)
	}
	return nil
}

// listenAddr makes an --http address loopback unless it names a host:
// "8080" and ":8080" listen on 127.0.0.1:8080.
func listenAddr(addr string) (string, error) {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", cmdkit.Usagef("--http %q: want [HOST:]PORT", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// loopbackHost reports whether a listener on host is reachable from this
// machine only: an IP address in 127.0.0.0/8 or ::1 (IPv4-mapped too), or
// "localhost". Any other name is taken as reachable from elsewhere: it is
// never resolved here, and the address bound is checked again (bound).
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}

// bound checks the address a listener got: without --allow-remote it must
// be loopback, whatever the name given resolved to.
func (l *Listen) bound(a net.Addr) error {
	if tcp, ok := a.(*net.TCPAddr); ok && !l.AllowRemote && !tcp.IP.IsLoopback() {
		return fmt.Errorf("mcp: --http %s listens on %s, which other machines could reach; give --allow-remote to serve them", l.Addr, a)
	}
	return nil
}

// token is the bearer token every request must carry: --token-file's,
// else TokenVar's, else a generated one when AllowRemote; "" when none is
// needed (a loopback listener given none). generated says it was made
// here, to be shown once.
func (l *Listen) token(env *cmdkit.Env) (token string, generated bool, err error) {
	from := ""
	switch {
	case l.TokenFile != "":
		b, err := safeopen.ReadFile(l.TokenFile, 4096)
		if err != nil {
			return "", false, fmt.Errorf("mcp: --token-file: %w", err)
		}
		token, from = strings.TrimSpace(string(b)), "--token-file "+l.TokenFile
	case env.Vars.Get(TokenVar) != "":
		token, from = strings.TrimSpace(env.Vars.Get(TokenVar)), "$"+TokenVar
	case l.AllowRemote:
		r := l.Rand
		if r == nil {
			r = rand.Reader
		}
		b := make([]byte, 32)
		if _, err := io.ReadFull(r, b); err != nil {
			return "", false, fmt.Errorf("mcp: generating a token: %w", err)
		}
		return base64.RawURLEncoding.EncodeToString(b), true, nil
	default:
		return "", false, nil
	}
	if len(token) < minToken || strings.TrimLeft(token, tokenChars) != "" {
		return "", false, &cmdkit.UsageError{Err: fmt.Errorf("mcp: the token of %s must be at least %d characters of A-Z a-z 0-9 - . _ ~ + /", from, minToken)}
	}
	return token, false, nil
}

const tokenChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/"

// requireToken lets through only requests carrying "Authorization: Bearer
// token" (the scheme in any case), and answers the others 401 with a
// WWW-Authenticate header (RFC 6750): error="invalid_token" for a wrong
// token. The tokens are compared in constant time over their SHA-256
// digests, so neither the token's bytes nor its length show in the timing.
func requireToken(token string, h http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mecha"`)
			http.Error(w, "unauthorized: this server requires a bearer token", http.StatusUnauthorized)
			return
		}
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		if subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="mecha", error="invalid_token"`)
			http.Error(w, "unauthorized: the bearer token is not this server's", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// stdioTransport is the command's own stdin and stdout as an MCP
// transport.
func stdioTransport(env *cmdkit.Env) mcp.Transport {
	return &mcp.IOTransport{Reader: io.NopCloser(env.In), Writer: nopWriteCloser{env.Out}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serve serves MCP over streamable HTTP until ctx is done, each new
// client session getting getServer's server, the SDK's handler seen
// through watch (the recorder's and the proxy's readers of each body). The SDK's DNS rebinding
// protection stays on; a bearer token is required when l asks for one.
// The URL goes to stderr once listening, with a generated token.
func (l *Listen) serve(ctx context.Context, env *cmdkit.Env, watch func(http.Handler) http.Handler, getServer func() *mcp.Server) error {
	addr, err := listenAddr(l.Addr)
	if err != nil {
		return err
	}
	token, generated, err := l.token(env)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	if err := l.bound(ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	h := watch(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return getServer() }, nil))
	if token != "" {
		h = requireToken(token, h)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	l.announce(env, ln.Addr(), token, generated)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("mcp: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("mcp: %w", err)
	}
	srv.Close()
	return nil
}

// announce says on stderr where the server listens, whether a token is
// required (a generated one shown this once), and that a remote listener
// is plain HTTP.
func (l *Listen) announce(env *cmdkit.Env, a net.Addr, token string, generated bool) {
	fmt.Fprintf(env.Err, "mecha: MCP over streamable HTTP at http://%s/mcp\n", a)
	if l.AllowRemote {
		fmt.Fprintf(env.Err, "mecha: warning: other machines can reach %s; requests need the bearer token, and travel as plain HTTP (use an SSH tunnel or a TLS proxy)\n", a)
	}
	switch {
	case generated:
		fmt.Fprintf(env.Err, "mecha: bearer token (shown once; clients send \"Authorization: Bearer TOKEN\"): %s\n", token)
	case token != "":
		fmt.Fprintln(env.Err, "mecha: requests need the bearer token given (\"Authorization: Bearer TOKEN\")")
	}
}

// finish closes the recording and says where it went.
func finish(env *cmdkit.Env, rec *mcpserve.Recorder) {
	rec.Close()
	if id := rec.ID(); id != "" {
		fmt.Fprintf(env.Err, "mecha: session %s\n", id)
	}
}
