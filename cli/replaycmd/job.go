package replaycmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/subagent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// Settings are the choices a replay is made with.
type Settings struct {
	Provider, Model string
	Mode            replay.Mode
	Workspace       string
	// Permission replaces the recorded mode for live calls ("": keep it).
	Permission tool.Mode
	MockScript string
	Record     bool
	// RequestTimeout is --request-timeout (0: config.toml's timeouts).
	RequestTimeout time.Duration
	// MCP are --mcp-config and --no-mcp: today's MCP servers, started
	// once for the job.
	MCP harness.MCP
}

// Job replays one session, as often as asked.
type Job struct {
	env      *cmdkit.Env
	cfg      *config.Config
	s        *session.Session
	set      Settings
	override replay.Override // -p and -m; each turn otherwise goes to its attach's own
	tools    replay.ToolsFunc
	tmp      string // a stand-in workspace, removed by Cleanup
	wss      harness.Workspaces
	mcp      *mcpclient.Set
	// lw records the replay being run (nil when not recorded): a child
	// the agent tool starts in a live replay names it as its parent.
	lw *session.Lazy
}

// NewJob prepares the replay of s, starting today's MCP servers (call
// Cleanup to end them).
func NewJob(ctx context.Context, env *cmdkit.Env, cfg *config.Config, s *session.Session, set Settings) (*Job, error) {
	j := &Job{env: env, cfg: cfg, s: s, set: set}
	dir, err := j.workspace(s.Meta.Workspace)
	if err != nil {
		return nil, err
	}
	if j.mcp, err = harness.StartMCPFor(ctx, attach.World(env), cfg, set.MCP, dir); err != nil {
		j.Cleanup()
		return nil, err
	}
	mcpTools, err := j.mcp.Tools()
	if err != nil {
		j.Cleanup()
		return nil, err
	}
	j.override = replay.Override{Provider: set.Provider, Model: set.Model,
		DefaultModel: func(name string) string { return harness.DefaultModel(cfg, name) }}
	j.tools = func(rc transcript.Config) (*tool.Registry, *tool.Tracker, error) {
		if set.Permission != "" {
			rc.PermissionMode = string(set.Permission)
		}
		ws, err := j.workspace(rc.Workspace)
		if err != nil {
			return nil, nil, err
		}
		rc.Workspace = ws
		return harness.BuildTools(attach.World(env), &j.wss, rc, harness.ToolSetup{MCP: mcpTools, Subagent: j.subagent(rc)})
	}
	return j, nil
}

// subagent is how the agent tool runs a child when a live replay makes a
// call of it for real: on the provider and model the turn is replayed on,
// recorded under the replay's session when the replay is recorded. (A
// recorded call answered from the recording runs nothing.)
func (j *Job) subagent(rc transcript.Config) *subagent.Setup {
	sub := &subagent.Setup{
		Provider: func() (provider.Provider, error) {
			return harness.NewProvider(attach.World(j.env), rc.Provider, harness.ProviderSetup{MockScript: j.set.MockScript,
				Config: j.cfg, RequestTimeout: j.set.RequestTimeout})
		},
		Prices: j.cfg.Prices, Now: j.env.Clock.Now, Log: j.env.Err, MCPServers: j.mcp.Record,
		ParentID: func() string {
			if j.lw == nil || j.lw.Writer() == nil {
				return ""
			}
			return j.lw.Writer().ID()
		},
	}
	if dir, err := j.env.SessionDir(); err == nil && j.set.Record {
		sub.Sessions = &session.Store{Dir: dir, Now: j.env.Clock.Now, BackgroundSync: true}
	}
	return sub
}

// Uses reports whether any attach is replayed on the named provider.
func (j *Job) Uses(name string) bool {
	return slices.ContainsFunc(replay.Targets(j.s, j.override), func(t replay.Target) bool { return t.Provider == name })
}

// workspace is where live calls run. In stop and error modes nothing runs,
// so a recorded workspace that is gone is replaced by an empty stand-in.
func (j *Job) workspace(recorded string) (string, error) {
	if j.set.Workspace != "" {
		return workdir.Dir(j.set.Workspace)
	}
	if ws, err := workdir.Dir(recorded); err == nil {
		return ws, nil
	} else if j.set.Mode == replay.ModeLive {
		return "", fmt.Errorf("the recorded workspace is gone (give one with -w for a live replay): %w", err)
	}
	if j.tmp == "" {
		d, err := os.MkdirTemp("", "mecha-replay-")
		if err != nil {
			return "", err
		}
		j.tmp = d
	}
	return j.tmp, nil
}

func (j *Job) Cleanup() {
	if j.mcp != nil {
		j.mcp.Close()
	}
	j.wss.Close()
	if j.tmp != "" {
		os.RemoveAll(j.tmp)
	}
}

// Run replays the session once, recording the replay unless told not to.
func (j *Job) Run(ctx context.Context, log io.Writer) (*replay.Report, error) {
	providers := func(name, _ string) (provider.Provider, error) {
		return harness.NewProvider(attach.World(j.env), name, harness.ProviderSetup{MockScript: j.set.MockScript,
			Config: j.cfg, RequestTimeout: j.set.RequestTimeout})
	}
	opts := replay.Options{
		Session: j.s, Providers: providers, Override: j.override, Mode: j.set.Mode,
		MechaVersion: cmdkit.Version(), PermissionMode: string(j.set.Permission), Tools: j.tools, Prices: j.cfg.Prices, Now: j.env.Clock.Now, Log: log,
		MCPServers: j.mcp.Record,
	}
	var lw *session.Lazy
	if j.set.Record {
		dir, err := j.env.SessionDir()
		if err != nil {
			return nil, err
		}
		// The session is created with the replay's first record, so a
		// replay that is refused leaves nothing behind.
		lw = &session.Lazy{Open: func(first transcript.Record) (*session.Writer, error) {
			// The first record is the first turn's config: the meta names
			// who the replay started on, as a session's names who it was
			// created with.
			var prov, model string
			if c, ok := first.(*transcript.Config); ok {
				prov, model = c.Provider, c.Model
			}
			store := &session.Store{Dir: dir, Now: j.env.Clock.Now, BackgroundSync: true}
			w, err := store.Create(transcript.Meta{Provider: prov, Model: model, Workspace: j.s.Meta.Workspace,
				Title: textfmt.Clip("replay of "+j.s.Meta.ID+": "+textfmt.OneLine(j.s.Meta.Title), 100), ReplayOf: j.s.Meta.ID})
			if err == nil {
				fmt.Fprintf(log, "session: %s replays %s (%s/%s)\n", w.ID(), j.s.Meta.ID, prov, model)
			}
			return w, err
		}}
		opts.Recorder = lw
	}
	j.lw = lw
	rep, err := replay.Replay(ctx, opts)
	if lw != nil && lw.Writer() != nil {
		if cerr := lw.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if rep != nil {
			rep.Replay = lw.Writer().ID()
		}
	}
	return rep, err
}
