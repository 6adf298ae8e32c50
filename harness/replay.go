package harness

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// Replayed is the recorded session a replay door re-drives, and what it
// does at a structural divergence.
type Replayed struct {
	Session *session.Session
	Mode    replay.Mode
}

// replaying is what a door opened by OpenReplay re-drives.
type replaying struct {
	of   *session.Session
	mode replay.Mode
	// workspace is -w: where live calls run ("": each attach's recorded
	// workspace).
	workspace string
	// standIn is an empty directory standing in for a recorded workspace
	// that is gone, when nothing runs; Close removes it.
	standIn  string
	mcpTools []*mcpclient.Tool
	// systemPrompt is --system-prompt-file's text, replacing the recorded
	// prompt of every attach (nil: the recorded ones).
	systemPrompt *string
}

// OpenReplay opens a door for replaying r.Session: config.toml read and
// today's MCP servers started, in the session's workspace. The attach's
// Settings give what a replay changes of the recording: Provider and Model
// (when set) answer every turn instead of each attach's own, --yes or
// --read-only replace the recorded permission mode for live calls,
// Workspace (-w) is where live calls run, SystemPromptFile's text replaces
// every attach's recorded system prompt (read here, before anything
// starts); MockScript, RequestTimeout and MCP as for a run. Its Meta is
// completed to name the session replayed.
//
// When nothing runs (stop and error modes), a recorded workspace that is
// gone is replaced by an empty stand-in; a live replay needs it (or -w).
func OpenReplay(ctx context.Context, w *World, a Attach, r Replayed) (*Door, error) {
	of := r.Session
	a.Meta.ReplayOf = of.Meta.ID
	a.Meta.Workspace = of.Meta.Workspace
	if a.Meta.Title == "" {
		a.Meta.Title = textfmt.Clip("replay of "+of.Meta.ID+": "+textfmt.OneLine(of.Meta.Title), 100)
	}
	d, err := newDoor(w, a)
	if err != nil {
		return nil, err
	}
	d.replay = &replaying{of: of, mode: r.Mode, workspace: a.Settings.Workspace}
	if f := a.Settings.SystemPromptFile; f != "" {
		b, err := safeopen.ReadFile(f, maxPromptFile)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("--system-prompt-file: %w", err)
		}
		text := string(b)
		d.replay.systemPrompt = &text
	}
	dir, err := d.replay.dir(of.Meta.Workspace)
	if err != nil {
		d.Close()
		return nil, err
	}
	if d.mcp, err = StartMCPFor(ctx, w, d.cfg, a.Settings.MCP, dir); err != nil {
		d.Close()
		return nil, err
	}
	if d.replay.mcpTools, err = d.mcp.Tools(); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// ReplayTargets are who answers the turns of each attach of the session
// the door replays (see replay.Targets).
func (d *Door) ReplayTargets() []replay.Target { return replay.Targets(d.replay.of, d.override()) }

func (d *Door) override() replay.Override {
	s := d.Settings()
	return replay.Override{Provider: s.Provider, Model: s.Model,
		DefaultModel: func(name string) string { return DefaultModel(d.cfg, name) }}
}

// Replay re-drives the door's session once (replay.Replay): each turn on
// a client from ProviderFor, with a tool surface built as a run's (the one
// policy chain, the agent tool's children as Door.Run sets them up) for
// the attach that recorded it. Unless the attach records nothing, the
// replay is recorded as a session of its own, created with its first
// record (a replay refused before it starts leaves nothing behind), whose
// header names who answered the first turn; the report names it. log
// receives the replay's lines of tool activity.
func (d *Door) Replay(ctx context.Context, log io.Writer) (*replay.Report, error) {
	rec := d.replayRecord()
	mode, _ := PermissionMode(d.Settings().Yes, d.Settings().ReadOnly)
	images := &imageCache{} // one per replay, over all its providers
	opts := replay.Options{
		Session: d.replay.of, Mode: d.replay.mode, Override: d.override(), MechaVersion: d.world.Version,
		PermissionMode: string(mode), SystemPrompt: d.replay.systemPrompt, Prices: d.cfg.Prices(), Now: d.world.clock(), Log: log, MCPServers: d.mcp.Record,
		Providers: func(name, _ string) (provider.Provider, error) {
			p, err := d.ProviderFor(name)
			if err != nil {
				return nil, err
			}
			store, err := Blobs(d.world)
			if err != nil {
				return nil, err
			}
			return imageProvider{p, store, images}, nil
		},
		Sent:  d.recordSent,
		Tools: func(rc transcript.Config) (*tool.Registry, *tool.Tracker, error) { return d.replayTools(rc, rec) },
	}
	if rec != nil {
		opts.Recorder = rec
	}
	rep, err := replay.Replay(ctx, opts)
	if rec != nil && rec.Writer() != nil {
		if cerr := rec.Close(); cerr != nil && err == nil {
			err = cerr
		}
		if rep != nil {
			rep.Replay = rec.Writer().ID()
		}
	}
	return rep, err
}

// replayRecord is what one replay records into (nil when nothing is
// recorded): a session created with the replay's first record, the first
// turn's config, whose provider and model the header names, as a run's
// names who it was created with.
func (d *Door) replayRecord() *session.Lazy {
	if d.attach.NoSession {
		return nil
	}
	return &session.Lazy{Open: func(first transcript.Record) (*session.Writer, error) {
		rc, _ := first.(*transcript.Config)
		if rc == nil {
			rc = &transcript.Config{}
		}
		w, err := d.create(rc, "")
		if err == nil {
			d.note("session: %s replays %s (%s/%s)", w.ID(), d.attach.Meta.ReplayOf, rc.Provider, rc.Model)
		}
		return w, err
	}}
}

// replayTools builds the tool surface of a replayed attach recorded with
// rc, as Door.Run builds a run's: the permission mode replaced when one was
// asked for, the workspace -w's (or the stand-in), and the agent tool's
// children, should a live replay call it for real, run on the provider
// the turn is replayed on and recorded under rec.
func (d *Door) replayTools(rc transcript.Config, rec *session.Lazy) (*tool.Registry, *tool.Tracker, error) {
	s := d.Settings()
	if mode, _ := PermissionMode(s.Yes, s.ReadOnly); mode != "" {
		rc.PermissionMode = string(mode)
	}
	ws, err := d.replay.dir(rc.Workspace)
	if err != nil {
		return nil, nil, err
	}
	// The live calls' workspace is trusted only if the attach was recorded
	// trusted in it and trusted_workspaces covers it now; a record older
	// than the decision is judged by today's configuration.
	trust := WorkspaceTrust(d.cfg, ws, recordedTrust(&rc, ws), false)
	rc.Workspace = ws
	rc.WorkspaceTrust = &trust
	sub := d.children(nil, nil, rec)
	sub.Provider = func() (provider.Provider, error) { return d.ProviderFor(rc.Provider) }
	return BuildTools(d.world, &d.wss, rc, ToolSetup{MCP: d.replay.mcpTools, Subagent: sub, Config: d.cfg})
}

// dir is where a replayed attach's live calls run: -w, else the recorded
// workspace. When nothing runs, a recorded workspace that is gone is
// replaced by an empty stand-in.
func (r *replaying) dir(recorded string) (string, error) {
	if r.workspace != "" {
		return workdir.Dir(r.workspace)
	}
	if ws, err := workdir.Dir(recorded); err == nil {
		return ws, nil
	} else if r.mode == replay.ModeLive {
		return "", fmt.Errorf("the recorded workspace is gone (give one with -w for a live replay): %w", err)
	}
	if r.standIn == "" {
		d, err := os.MkdirTemp("", "mecha-replay-")
		if err != nil {
			return "", err
		}
		r.standIn = d
	}
	return r.standIn, nil
}

// close removes the stand-in workspace.
func (r *replaying) close() {
	if r != nil && r.standIn != "" {
		os.RemoveAll(r.standIn)
	}
}

// ProviderFor builds the client of the named provider as Door.Run builds
// an attach's: config.toml's timeouts, or --request-timeout over them,
// and --mock-script for the mock.
func (d *Door) ProviderFor(name string) (provider.Provider, error) {
	return d.providerFor(d.Settings(), name)
}

func (d *Door) providerFor(s Settings, name string) (provider.Provider, error) {
	return NewProvider(d.world, name, ProviderSetup{MockScript: s.MockScript, Config: d.cfg, RequestTimeout: s.RequestTimeout})
}
