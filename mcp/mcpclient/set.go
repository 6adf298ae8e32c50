package mcpclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Options are what starting servers needs from the world.
type Options struct {
	// Getenv expands ${VAR} references.
	Getenv func(string) string
	// Environ is the environment a stdio server starts with, before its
	// configured env is added. The caller decides what it holds (mecha
	// hands on its own, less anything that looks like a credential).
	Environ []string
	// Dir is the working directory of stdio servers ("": mecha's).
	Dir string
	// LogDir receives each stdio server's stderr as mcp-<server>.log
	// ("": discarded).
	LogDir string
	// HTTPClient carries HTTP servers' requests (nil: a client of our own).
	HTTPClient *http.Client
	// ClientVersion is the version mecha gives in initialize.
	ClientVersion string
	// MaxResultBytes cuts results (0: the built-ins' default).
	MaxResultBytes int
	// Secrets are replaced in a result, with their encoded forms (see
	// tool.Redactor), before it is cut, so no cut leaves a fragment of one.
	Secrets []tool.Secret
	// KillGrace is the wait after closing a server's stdin before SIGTERM,
	// and after SIGTERM before SIGKILL (default 2s).
	KillGrace time.Duration
	// Dial, when set, replaces how a server is reached (tests use it for
	// in-memory servers). The returned closer, if any, runs at Close.
	Dial func(ctx context.Context, c ServerConfig) (mcp.Transport, io.Closer, error)

	redactor *tool.Redactor // Secrets' (nil: none)
}

// Server is one configured server, connected or not.
type Server struct {
	cfg ServerConfig
	// Err says why the server is not connected (nil when it is).
	Err error
	// Warnings are things worth a line that did not stop the server.
	Warnings []string
	session  *mcp.ClientSession
	closer   io.Closer
	init     *mcp.InitializeResult
	tools    []*Tool
	opts     *Options
}

// Config returns the server's configuration.
func (s *Server) Config() ServerConfig { return s.cfg }

// Tools returns the tools the server offers, in its order.
func (s *Server) Tools() []*Tool { return s.tools }

// Info is how a config record names the server. offered are the names of
// its tools that were offered (nil: all); the record keeps each one's name
// and what it declared.
func (s *Server) Info(offered []string) transcript.MCPServer {
	info := transcript.MCPServer{Name: s.cfg.Name, Transport: s.cfg.Kind(), Command: s.cfg.Command,
		Args: s.cfg.Args, URL: s.cfg.URL, Tools: []string{}}
	if s.init != nil {
		info.ProtocolVersion = s.init.ProtocolVersion
		if si := s.init.ServerInfo; si != nil {
			info.ServerName, info.ServerVersion = si.Name, si.Version
		}
	}
	for _, t := range s.tools {
		if offered == nil || slices.Contains(offered, t.name) {
			info.Tools = append(info.Tools, t.name)
			if info.ToolCapabilities == nil {
				info.ToolCapabilities = map[string][]string{}
			}
			info.ToolCapabilities[t.remote] = CapabilityList(t.caps)
		}
	}
	return info
}

// Set is the servers of a run.
type Set struct {
	servers []*Server
}

// Start starts every enabled server in parallel, each within its startup
// timeout, and returns when all are connected or have failed. A server
// that fails has its Err set; the others are unaffected. Close the Set
// in every case.
func Start(ctx context.Context, configs []ServerConfig, opts Options) *Set {
	set := &Set{}
	opts.redactor = tool.NewRedactor(opts.Secrets)
	var wg sync.WaitGroup
	for _, c := range configs {
		s := &Server{cfg: c, opts: &opts}
		set.servers = append(set.servers, s)
		if c.Disabled {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.Err = s.start(ctx)
			if s.Err != nil {
				s.close()
				s.session, s.tools = nil, nil
			}
		}()
	}
	wg.Wait()
	return set
}

// Servers returns every configured server, started or not, in order.
func (set *Set) Servers() []*Server {
	if set == nil {
		return nil
	}
	return set.servers
}

// Tools returns the tools of every connected server, in order. Two tools
// offered under one name are an error naming both.
func (set *Set) Tools() ([]*Tool, error) {
	var out []*Tool
	seen := map[string]*Tool{}
	for _, s := range set.Servers() {
		for _, t := range s.tools {
			if o, ok := seen[t.name]; ok {
				return nil, clashError(t.name, o, t)
			}
			seen[t.name] = t
			out = append(out, t)
		}
	}
	return out, nil
}

// Record is the mcp_servers field of a config record: each connected
// server with a tool among offered, with those tools.
func (set *Set) Record(offered []string) []transcript.MCPServer {
	var out []transcript.MCPServer
	for _, s := range set.Servers() {
		if s.session == nil {
			continue
		}
		if info := s.Info(offered); len(info.Tools) > 0 {
			out = append(out, info)
		}
	}
	return out
}

// Close ends every server (see process.Close) and waits for them all.
func (set *Set) Close() error {
	var wg sync.WaitGroup
	for _, s := range set.Servers() {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
	return nil
}

func (s *Server) close() {
	if s.session != nil {
		s.session.Close()
	}
	if s.closer != nil {
		s.closer.Close()
	}
}

// start connects, initialises and lists the server's tools within the
// startup timeout.
func (s *Server) start(parent context.Context) error {
	timeout := s.cfg.startupTimeout()
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	t, err := s.transport(ctx)
	if err != nil {
		return err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "mecha", Version: s.opts.ClientVersion},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	// Connect is given the startup context alone: the SDK gives up on a
	// server that never answers initialize when it ends.
	cs, err := client.Connect(ctx, t, nil)
	if err != nil {
		return s.startErr("initialize", ctx, timeout, err)
	}
	s.session = cs
	s.init = cs.InitializeResult()
	var listed []*mcp.Tool
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return s.startErr("tools/list", ctx, timeout, err)
		}
		listed = append(listed, tl)
	}
	return s.offer(listed)
}

func (s *Server) startErr(what string, ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer to %s within %s (startup_timeout_s)", what, timeout)
	}
	if p, ok := s.closer.(*process); ok {
		if exited, werr := p.Exited(); exited {
			return fmt.Errorf("the server exited during %s (%s)%s", what, exitText(werr), s.logHint())
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (s *Server) logHint() string {
	if s.opts.LogDir == "" || s.cfg.Kind() != TransportStdio {
		return ""
	}
	return "; its stderr is in " + filepath.Join(s.opts.LogDir, logName(s.cfg.Name))
}

// offer builds the tools the server offers: all of them, or those named
// in the config's tools.
func (s *Server) offer(listed []*mcp.Tool) error {
	has := func(want string) bool {
		return slices.ContainsFunc(listed, func(t *mcp.Tool) bool { return t.Name == want })
	}
	for _, want := range s.cfg.Tools {
		if !has(want) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("the server has no tool %q (tools = [...] in its config)", want))
		}
	}
	for _, want := range slices.Sorted(maps.Keys(s.cfg.ToolCapabilities)) {
		if !has(want) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("the server has no tool %q (tool_capabilities in its config)", want))
		}
	}
	for _, lt := range listed {
		if s.cfg.Tools != nil && !slices.Contains(s.cfg.Tools, lt.Name) {
			continue
		}
		t, err := newTool(s, lt)
		if err != nil {
			return err
		}
		for _, o := range s.tools {
			if o.name == t.name {
				return clashError(t.name, o, t)
			}
		}
		s.tools = append(s.tools, t)
	}
	return nil
}

// transport reaches the server as configured, with ${VAR} expanded now.
func (s *Server) transport(ctx context.Context) (mcp.Transport, error) {
	if s.opts.Dial != nil {
		t, c, err := s.opts.Dial(ctx, s.cfg)
		s.closer = c
		return t, err
	}
	getenv := s.opts.Getenv
	switch s.cfg.Kind() {
	case TransportHTTP, TransportSSE:
		url, err := expand(s.cfg.URL, getenv)
		if err != nil {
			return nil, fmt.Errorf("url: %w", err)
		}
		headers, err := expandMap(s.cfg.Headers, getenv)
		if err != nil {
			return nil, fmt.Errorf("headers: %w", err)
		}
		hc := &http.Client{Transport: &headerTransport{base: baseTransport(s.opts.HTTPClient), headers: headers}}
		if s.cfg.Kind() == TransportSSE {
			return &mcp.SSEClientTransport{Endpoint: url, HTTPClient: hc}, nil
		}
		return &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc, MaxRetries: -1}, nil
	}
	return s.startProcess()
}

func (s *Server) startProcess() (mcp.Transport, error) {
	getenv := s.opts.Getenv
	command, err := expand(s.cfg.Command, getenv)
	if err != nil {
		return nil, fmt.Errorf("command: %w", err)
	}
	args := make([]string, len(s.cfg.Args))
	for i, a := range s.cfg.Args {
		if args[i], err = expand(a, getenv); err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
	}
	env, err := expandMap(s.cfg.Env, getenv)
	if err != nil {
		return nil, fmt.Errorf("env: %w", err)
	}
	cmd := exec.Command(command, args...)
	cmd.Dir = s.opts.Dir
	cmd.Env = append([]string{}, s.opts.Environ...)
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	stderr, err := s.logFile()
	if err != nil {
		return nil, err
	}
	grace := s.opts.KillGrace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	p, stdout, err := startProcess(cmd, stderr, grace)
	if stderr != nil {
		stderr.Close() // the child has its own copy
	}
	if err != nil {
		return nil, err
	}
	s.closer = p
	return &procTransport{p: p, stdout: stdout}, nil
}

// logFile opens the server's stderr log for appending, nil without LogDir.
func (s *Server) logFile() (*os.File, error) {
	if s.opts.LogDir == "" {
		return nil, nil
	}
	if err := os.MkdirAll(s.opts.LogDir, 0o700); err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(s.opts.LogDir, logName(s.cfg.Name)), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	return f, nil
}

func logName(server string) string { return "mcp-" + sanitize(server) + ".log" }

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base    http.RoundTripper
	headers map[string]string
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.base.RoundTrip(r)
}

func baseTransport(c *http.Client) http.RoundTripper {
	if c != nil && c.Transport != nil {
		return c.Transport
	}
	return &http.Transport{}
}
