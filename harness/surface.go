package harness

import (
	"context"
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/workdir"

	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/transcript"
)

// SurfaceSpec describes the tool surface of an entrance that runs no model
// (tool call, tool list, rerun, mcp serve; a script's calls are tool
// calls). Its zero value is what a new run gets in the current directory:
// permission ask, trifecta refuse, the shell sandboxed with the network
// cut, the configured MCP servers, every tool, a clean conversation. An
// entrance states only how it differs.
type SurfaceSpec struct {
	// Workspace is the directory the tools work in ("": the current one).
	Workspace string
	// Yes and ReadOnly are the permission mode (neither: ask).
	Yes, ReadOnly bool
	// Trifecta is the interlock's policy: refuse (""), ask or off.
	Trifecta string
	// Sandbox confines the shell (mode "": landlock), lowered to what this
	// kernel enforces, with a note on the World's Err when it is less.
	Sandbox Sandbox
	// MCP are the configured servers started: config.toml's and those of
	// its Files; none when Off.
	MCP MCP
	// Servers are started besides the configured ones: the servers a
	// session recorded (rerun), an ad-hoc one (tool call). A name defined
	// twice is an error.
	Servers []mcpclient.ServerConfig
	// For names the one tool the surface is opened for ("": any). Only
	// the MCP server its name can belong to is started, and one that fails
	// costs no line on Err: MissingServer says why, if the tool is asked
	// for and not there.
	For string
	// Tools restricts the surface, as Settings.Tools does; nil: every tool.
	Tools []string
	// Taint is the conversation the surface starts from (clean by
	// default): the interlock judges the first call by it. TaintWhy says
	// where it came from ("the recorded session").
	Taint    transcript.Taint
	TaintWhy string
	// TrustedHosts are hosts the interlock trusts as if a prompt had named
	// them (tool call's --trust-host; a script passes those its recording
	// trusted): names, or "*.host" for host's subdomains.
	TrustedHosts []string
	// Asker answers the gate's and the interlock's questions (nil: a
	// terminal prompt when World.In is one, else nobody).
	Asker tool.Asker
	// RecordedTrust is the workspace decision of the session whose calls
	// the surface redoes (rerun), nil for none: the workspace is trusted
	// only if it was then and trusted_workspaces covers it now
	// (WorkspaceTrust).
	RecordedTrust *transcript.WorkspaceTrust
}

// Validate refuses a spec that cannot be, as a UsageError, before
// anything is opened or started.
func (s SurfaceSpec) Validate() error {
	if err := s.sandbox().Validate(); err != nil {
		return err
	}
	if _, err := tool.ParseTrifecta(s.Trifecta); err != nil {
		return usagef("--trifecta must be refuse, ask or off, not %q", s.Trifecta)
	}
	for _, h := range s.TrustedHosts {
		if err := sandbox.CheckDomain(h); err != nil {
			return usagef("--trust-host: %v", err)
		}
	}
	_, err := PermissionMode(s.Yes, s.ReadOnly)
	return err
}

// Surface is a tool surface opened: its workspace open, its MCP servers
// started, its tools decorated with the one policy chain around a
// tracker of their own. Close lets go of it all.
type Surface struct {
	reg     *tool.Registry
	tracker *tool.Tracker
	rc      transcript.Config
	mcp     *mcpclient.Set
	wss     Workspaces
}

// OpenSurface opens the tool surface spec describes: its configuration
// resolved (workspace, permission mode, trifecta, the sandbox as this
// kernel enforces it), its MCP servers started in the workspace, and its
// tools built as a Door builds a prompt's (surfaceOn), the tracker started
// from spec.Taint.
func OpenSurface(ctx context.Context, w *World, spec SurfaceSpec) (*Surface, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	ws, err := workdir.Dir(spec.Workspace)
	if err != nil {
		return nil, err
	}
	// config.toml is read once: for the configured servers and for what it
	// says of the built-ins (refuse_private).
	cfg, err := LoadConfig(w)
	if err != nil {
		return nil, err
	}
	servers, err := spec.servers(cfg)
	if err != nil {
		return nil, err
	}
	mode, _ := PermissionMode(spec.Yes, spec.ReadOnly)
	if mode == "" {
		mode = tool.ModeAsk
	}
	trifecta := spec.Trifecta
	if trifecta == "" {
		trifecta = string(tool.TrifectaRefuse)
	}
	s := &Surface{rc: transcript.Config{MechaVersion: w.Version, Workspace: ws, PermissionMode: string(mode), Trifecta: trifecta}}
	s.rc.Sandbox, s.rc.SandboxNetwork, s.rc.SandboxAllowDomains = spec.sandbox().Mode, spec.Sandbox.Network, spec.Sandbox.AllowDomains
	trust := WorkspaceTrust(cfg, ws, spec.RecordedTrust, false)
	s.rc.WorkspaceTrust = &trust
	lowerSandbox(w, &s.rc)
	if spec.For != "" {
		s.mcp = ConnectMCP(ctx, w, servers, ws)
	} else {
		s.mcp = StartMCP(ctx, w, servers, ws)
	}
	s.reg, s.tracker, err = surfaceOn(w, &s.wss, s.mcp, &s.rc, ToolSetup{Only: spec.Tools, Asker: spec.Asker, Config: cfg})
	if err != nil {
		s.Close()
		return nil, err
	}
	if !spec.Taint.Clean() {
		s.tracker.Start(spec.Taint, spec.TaintWhy)
	}
	s.tracker.TrustHosts(spec.TrustedHosts...)
	return s, nil
}

// sandbox is the sandbox asked for, landlock when no mode is given.
func (s SurfaceSpec) sandbox() Sandbox {
	sb := s.Sandbox
	if sb.Mode == "" {
		sb.Mode = sandbox.ModeLandlock
	}
	return sb
}

// servers are the MCP servers spec starts: the configured ones unless
// MCP.Off, then Servers; with For, only the one its name can belong to.
func (s SurfaceSpec) servers(cfg *config.Config) ([]mcpclient.ServerConfig, error) {
	all := s.Servers
	if !s.MCP.Off {
		configured, err := MCPServers(cfg, s.MCP.Files)
		if err != nil {
			return nil, err
		}
		if all, err = mcpclient.Merge(configured, s.Servers); err != nil {
			return nil, err
		}
	}
	if s.For == "" {
		return all, nil
	}
	var want []mcpclient.ServerConfig
	for _, c := range all {
		if mayOffer(c.Name, s.For) {
			want = append(want, c)
		}
	}
	return want, nil
}

// mayOffer reports whether the MCP server may offer the tool name.
func mayOffer(server, name string) bool {
	return strings.HasPrefix(name, mcpclient.ServerPrefix(server)+"__")
}

// surfaceOn builds an attach's tool surface on MCP servers already started
// (set): BuildTools over the built-ins and set's tools, and rc completed
// with what the surface offers (Tools, ToolSpecs, MCPServers), as the
// attach's config record keeps it. A Door builds each prompt's surface
// through it, OpenSurface the surface of an entrance that runs no model.
func surfaceOn(w *World, wss *Workspaces, set *mcpclient.Set, rc *transcript.Config, setup ToolSetup) (*tool.Registry, *tool.Tracker, error) {
	mcpTools, err := set.Tools()
	if err != nil {
		return nil, nil, err
	}
	setup.MCP = mcpTools
	cfg := setup.Config
	if cfg == nil {
		if cfg, err = LoadConfig(w); err != nil {
			return nil, nil, err
		}
		setup.Config = cfg
	}
	rc.SandboxReadDeny = nil
	if rc.Sandbox == sandbox.ModeLandlock {
		if rc.SandboxReadDeny, err = readDeny(w, cfg); err != nil {
			return nil, nil, err
		}
	}
	if err := egressDomains(w, cfg, rc); err != nil {
		return nil, nil, err
	}
	if rc.TrustedHosts, err = trustedHosts(cfg); err != nil {
		return nil, nil, err
	}
	if setup.Rules == nil {
		if setup.Rules, err = PermissionRules(w, cfg, rc.Workspace, func(s string) { fmt.Fprintln(w.errw(), s) }); err != nil {
			return nil, nil, err
		}
	}
	rc.PermissionRules = RecordRules(setup.Rules)
	reg, tracker, err := BuildTools(w, wss, *rc, setup)
	if err != nil {
		return nil, nil, err
	}
	rc.Tools, rc.ToolSpecs, rc.MCPServers = reg.Names(), reg.TranscriptSpecs(), set.Record(reg.Names())
	return reg, tracker, nil
}

// Registry is the surface's tools, decorated.
func (s *Surface) Registry() *tool.Registry { return s.reg }

// Tracker is the taint of the calls made through the surface so far (and
// of spec.Taint); the interlock judges each call by it.
func (s *Surface) Tracker() *tool.Tracker { return s.tracker }

// Config is the surface as a config record keeps it: mecha's version, the
// workspace, the permission mode, the trifecta policy, the sandbox
// enforced, the tools offered with their specs and the MCP servers that
// offer them. An entrance that records names what drove the calls
// (Provider) itself.
func (s *Surface) Config() transcript.Config { return s.rc }

// MissingServer says why the MCP server a tool name would belong to is
// not there: it did not start, or it is disabled; nil otherwise.
func (s *Surface) MissingServer(name string) error {
	for _, srv := range s.mcp.Servers() {
		c := srv.Config()
		if !mayOffer(c.Name, name) {
			continue
		}
		switch {
		case srv.Err != nil:
			return fmt.Errorf("mcp: server %q, which would offer %s, did not start: %w", c.Name, name, srv.Err)
		case c.Disabled:
			return fmt.Errorf("mcp: server %q, which would offer %s, is disabled (enabled = false)", c.Name, name)
		}
	}
	return nil
}

// Close ends the MCP servers and closes the workspace.
func (s *Surface) Close() error {
	if s.mcp != nil {
		s.mcp.Close()
	}
	return s.wss.Close()
}
