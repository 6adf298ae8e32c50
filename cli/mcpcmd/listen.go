package mcpcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/mcp/mcpserve"
)

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

// stdioTransport is the command's own stdin and stdout as an MCP
// transport.
func stdioTransport(env *cmdkit.Env) mcp.Transport {
	return &mcp.IOTransport{Reader: io.NopCloser(env.In), Writer: nopWriteCloser{env.Out}}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves MCP over streamable HTTP on addr until ctx is done,
// each new client session getting getServer's server. The SDK's DNS
// rebinding protection stays on. The URL goes to stderr once listening.
func serveHTTP(ctx context.Context, env *cmdkit.Env, addr string, ids *mcpserve.IDs, getServer func() *mcp.Server) error {
	addr, err := listenAddr(addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return getServer() }, nil)
	srv := &http.Server{Handler: ids.WatchHTTP(h), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.Err, "mecha: MCP over streamable HTTP at http://%s/mcp\n", ln.Addr())
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

// finish closes the recording and says where it went.
func finish(env *cmdkit.Env, rec *mcpserve.Recorder) {
	rec.Close()
	if id := rec.ID(); id != "" {
		fmt.Fprintf(env.Err, "mecha: session %s\n", id)
	}
}
