package mcpproxy

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/mcp/mcpserve"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Options configure a Proxy.
type Options struct {
	// Connect returns a new transport to the upstream server; it is called
	// once per client session.
	Connect func(ctx context.Context) (mcp.Transport, error)
	// Upstream describes the upstream for the config record; the proxy
	// fills in its serverInfo and protocol version.
	Upstream transcript.MCPUpstream
	// Config is the rest of the config record (mecha version, workspace).
	Config transcript.Config
	// Recorder records the session; nil records nothing.
	Recorder *mcpserve.Recorder
	// IDs supplies the calls' JSON-RPC ids (see mcpserve.IDs).
	IDs *mcpserve.IDs
	// Now is the clock the calls are timed by (nil: time.Now).
	Now func() time.Time
	// Background is the context upstream sessions live in; it must
	// outlive the requests that create them (nil: context.Background).
	Background context.Context
	// OnError, when not nil, hears of an upstream that could not be
	// connected (the client is answered with the error too).
	OnError func(error)
}

// Proxy makes one forwarding server per client session.
type Proxy struct {
	opts Options
	tags tags

	mu    sync.Mutex
	links []*link
}

// New returns a proxy.
func New(opts Options) *Proxy {
	if opts.Background == nil {
		opts.Background = context.Background()
	}
	return &Proxy{opts: opts}
}

// handshakeVersions are the protocol versions a proxy offers its clients:
// those negotiated by initialize (see the package doc).
func handshakeVersions() []string {
	var out []string
	for _, v := range mcp.SupportedProtocolVersions() {
		if v <= "2025-11-25" {
			out = append(out, v)
		}
	}
	return out
}

// Server returns a new server for one client session. Serve it on one
// transport (stdio) or return it from a StreamableHTTPHandler's getServer.
func (p *Proxy) Server() *mcp.Server {
	l := &link{p: p, tokens: map[any]context.Context{}}
	l.server = mcp.NewServer(&mcp.Implementation{Name: "mecha-proxy", Version: "0"}, &mcp.ServerOptions{
		Capabilities:              &mcp.ServerCapabilities{},
		SupportedProtocolVersions: handshakeVersions(),
		// Subscriptions and log levels are forwarded, and also kept by the
		// SDK's session, which needs them to deliver what comes back.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	for _, m := range passMethods {
		mcp.AddReceivingCustomMethod(l.server, m, func(context.Context, *mcp.ServerSession, *passParams) (*passResult, error) {
			return nil, fmt.Errorf("mcpproxy: %s is forwarded, never answered here", m)
		})
	}
	l.server.AddReceivingMiddleware(l.forward)
	if rec := p.opts.Recorder; rec != nil {
		// Outermost, so a call is timed from its arrival to its answer.
		l.server.AddReceivingMiddleware(mcpserve.Middleware(rec, p.opts.IDs, p.opts.Now))
	}
	p.mu.Lock()
	p.links = append(p.links, l)
	p.mu.Unlock()
	return l.server
}

// Close closes every upstream session.
func (p *Proxy) Close() error {
	p.mu.Lock()
	links := p.links
	p.links = nil
	p.mu.Unlock()
	var first error
	for _, l := range links {
		if err := l.close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// passMethods are methods of the protocol the SDK does not know (the
// tasks of 2025-11-25), forwarded as they are.
var passMethods = []string{"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"}

// passParams and passResult carry a method the SDK does not know: the
// params and result go as they came (raw.go), these only route them.
type passParams struct{ mcp.ParamsBase }

type passResult struct{ mcp.ResultBase }

// link is one client session and its upstream.
type link struct {
	p      *Proxy
	server *mcp.Server

	mu       sync.Mutex
	up       *mcp.ClientSession
	down     *mcp.ServerSession
	upErr    error
	tokens   map[any]context.Context // progress token -> the client request's context
	inflight []inflight              // client requests being answered, oldest first
	seq      uint64
	initRes  *mcp.InitializeResult
	upClosed bool
}

func (l *link) close() error {
	l.mu.Lock()
	up := l.up
	l.upClosed = true
	l.mu.Unlock()
	if up == nil {
		return nil
	}
	return up.Close()
}

func (l *link) upstream() (*mcp.ClientSession, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.up == nil {
		if l.upErr != nil {
			return nil, l.upErr
		}
		return nil, fmt.Errorf("mcpproxy: no upstream session: the client has not initialized")
	}
	return l.up, nil
}

// connect connects the upstream as the client that initialized.
func (l *link) connect(ctx context.Context, s *slot, ss *mcp.ServerSession, ip *mcp.InitializeParams) (*mcp.InitializeResult, error) {
	l.mu.Lock()
	if l.up != nil {
		res := l.initRes
		l.mu.Unlock()
		return res, nil
	}
	l.mu.Unlock()
	impl := &mcp.Implementation{Name: "mecha-proxy", Version: "0"}
	caps := &mcp.ClientCapabilities{}
	version := ""
	if ip != nil {
		if ip.ClientInfo != nil {
			impl = ip.ClientInfo
		}
		if ip.Capabilities != nil {
			caps = ip.Capabilities
		}
		version = ip.ProtocolVersion
	}
	c := mcp.NewClient(impl, &mcp.ClientOptions{Capabilities: caps})
	c.AddReceivingMiddleware(l.back)
	for _, m := range passMethods {
		mcp.AddSendingCustomMethod[*passParams, *passResult](c, m)
	}
	t, err := l.p.opts.Connect(ctx)
	if _, http := t.(*mcp.StreamableClientTransport); err == nil && !http {
		// Over HTTP the HTTP client keeps the bytes (rawhttp.go).
		t = &transport{Transport: t, tags: &l.p.tags}
	}
	if err == nil {
		var cs *mcp.ClientSession
		// The session outlives this request: connect it in the proxy's
		// context, bounded by the request's.
		cctx, cancel := context.WithCancel(withSlot(l.p.opts.Background, s))
		stop := context.AfterFunc(ctx, cancel)
		cs, err = c.Connect(cctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
		stop()
		if err == nil {
			l.mu.Lock()
			l.up, l.down, l.initRes = cs, ss, cs.InitializeResult()
			closed := l.upClosed
			l.mu.Unlock()
			if closed {
				cs.Close()
			}
			l.recordUpstream(cs.InitializeResult())
			// An upstream that goes away ends the client's session, as it
			// would have directly.
			go func() {
				cs.Wait()
				ss.Close()
			}()
			return cs.InitializeResult(), nil
		}
	}
	err = fmt.Errorf("mcpproxy: connecting to the upstream server: %w", err)
	if l.p.opts.OnError != nil {
		l.p.opts.OnError(err)
	}
	l.mu.Lock()
	l.upErr = err
	l.mu.Unlock()
	return nil, err
}

func (l *link) recordUpstream(ir *mcp.InitializeResult) {
	rec := l.p.opts.Recorder
	if rec == nil || ir == nil {
		return
	}
	u := l.p.opts.Upstream
	u.Args = slices.Clone(u.Args)
	if ir.ServerInfo != nil {
		u.Server.Name, u.Server.Version = ir.ServerInfo.Name, ir.ServerInfo.Version
	}
	u.Server.ProtocolVersion = ir.ProtocolVersion
	c := l.p.opts.Config
	c.MCPUpstream = &u
	rec.SetConfig(c)
}
