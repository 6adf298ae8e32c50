package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/subagent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/learn"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Attach describes what an entrance wants of the harness.
type Attach struct {
	Settings Settings
	// Resume is the session to continue (zero for a new one); the CLI
	// resolves ids, prefixes, "last" and -c to it.
	Resume session.Ref
	// NoSession records nothing.
	NoSession bool
	// Meta is the header of a new session: its title and what it is (a
	// reflection's reflects_on, a distillation, a replay's replay_of). The
	// provider, model and workspace are filled in from the attach.
	Meta transcript.Meta
	// Asker answers the permission gate's and the interlock's questions
	// (nil: a terminal prompt when World.In is a terminal, else nobody).
	Asker tool.Asker
	// Quiet keeps the harness's own notes (the session it records into)
	// off World.Err: the chat shows them in its status line.
	Quiet bool
}

// Prompt is one prompt run through a Door.
type Prompt struct {
	Text string
	// Watch sees the run as it happens (agent.Options.OnEvent), each event
	// with the conversation's taint as it stands after it.
	Watch func(agent.Event, transcript.Taint)
	// Configured is told the attach's configuration once it is resolved and
	// its tools are built, before the loop starts.
	Configured func(transcript.Config)
	// Steer is what a person typed while calls ran (agent.Options.Steer).
	Steer func() []string
	// Log receives the loop's lines of tool activity (nil: none).
	Log io.Writer
	// Files are the workspace's files the prompt mentions (the chat's
	// @file): their content is sent after Text, read inside the workspace
	// as the file tools read, and the conversation is private from then
	// on, as after an fs_read.
	Files []string
	// Compact makes the prompt a compaction asked for (the chat's
	// /compact): Text is the person's instructions for the summary, and
	// the run replaces the session's conversation before its last answer
	// with the summary, recorded as an automatic compaction is
	// (agent.Options.CompactOnly).
	Compact bool
}

// Door is an attach opened: its session held, its MCP servers started,
// its workspaces open. Run runs prompts through it, one at a time; Close
// lets go of it all.
type Door struct {
	world *World
	cfg   *config.Config
	// mu guards attach's settings, which Update may change while a prompt
	// runs (the next prompt takes them).
	mu     sync.Mutex
	attach Attach

	mcp  *mcpclient.Set
	wss  Workspaces
	prev *session.Session // the session continued, nil for a new one
	lock *session.Lock    // held from before prev was read until Close
	ref  session.Ref      // the session, once it has one

	replay *replaying // what a door opened by OpenReplay re-drives
	// unsentNoted are the settings (by provider and flag) already said
	// to be not sent: the note is said once per door.
	unsentNoted map[string]bool
}

// Open opens an attach: config.toml read, the resumed session (if any)
// locked and loaded, the MCP servers started. Nothing is recorded until a
// prompt's run records its first record.
func Open(ctx context.Context, w *World, a Attach) (*Door, error) {
	d, err := newDoor(w, a)
	if err != nil {
		return nil, err
	}
	if !a.Resume.IsZero() {
		if err := d.hold(a.Resume); err != nil {
			return nil, err
		}
	}
	dir, err := d.workspace()
	if err != nil {
		d.Close()
		return nil, err
	}
	WorkspaceMCPNote(w, dir, a.Settings.MCP)
	if d.mcp, err = StartMCPFor(ctx, w, d.cfg, a.Settings.MCP, dir); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// newDoor is a door with its settings checked and config.toml read, and
// nothing opened yet.
func newDoor(w *World, a Attach) (*Door, error) {
	if err := a.Settings.Validate(); err != nil {
		return nil, err
	}
	cfg, err := LoadConfig(w)
	if err != nil {
		return nil, err
	}
	return &Door{world: w, attach: a, cfg: cfg}, nil
}

// LoadConfig reads $MECHA_HOME/config.toml (defaults when it is missing).
func LoadConfig(w *World) (*config.Config, error) {
	home, err := w.Home()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(home + "/config.toml")
	if err != nil {
		return nil, err
	}
	if _, err := tool.ParseRules(cfg.Permissions.Allow, cfg.Permissions.Deny, "[permissions]"); err != nil {
		return nil, fmt.Errorf("config: %s: %w", cfg.Path, err)
	}
	return cfg, nil
}

// workspace is the directory the MCP servers start in: the -w given, else
// the resumed session's, else the current directory.
func (d *Door) workspace() (string, error) {
	s := d.Settings()
	if d.prev != nil && !s.given("workspace") {
		return workdir.Dir(d.prev.Meta.Workspace)
	}
	return workdir.Dir(s.Workspace)
}

// hold takes the session ref names: locked before it is read, so a
// second writer fails at once and the history cannot change under the
// door.
func (d *Door) hold(ref session.Ref) error {
	store, err := d.world.Store()
	if err != nil {
		return err
	}
	lock, err := store.Acquire(ref)
	if err != nil {
		return err
	}
	s, err := store.Load(ref)
	if err != nil {
		lock.Release()
		return err
	}
	if s.Skipped > 0 {
		d.note("note: %d unreadable %s in the transcript %s skipped", s.Skipped, textfmt.Plural(s.Skipped, "line", "lines"), textfmt.Plural(s.Skipped, "was", "were"))
	}
	d.prev, d.lock, d.ref = s, lock, ref
	return nil
}

// Settings are the settings of the door's next attach.
func (d *Door) Settings() Settings {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.attach.Settings
}

// Config is config.toml as the door read it.
func (d *Door) Config() *config.Config { return d.cfg }

// Session is the session the door records into (zero before a new one
// has recorded anything).
func (d *Door) Session() session.Ref { return d.ref }

// Resumed is the session as it stood when the door took it (nil for a
// new one). It is reloaded after each prompt.
func (d *Door) Resumed() *session.Session { return d.prev }

// Update changes the settings of the next prompt's attach (the chat's
// /model); given names the settings now given.
func (d *Door) Update(f func(s *Settings)) error {
	s := d.Settings()
	f(&s)
	if err := s.Validate(); err != nil {
		return err
	}
	d.mu.Lock()
	d.attach.Settings = s
	d.mu.Unlock()
	return nil
}

// Retitle sets the title of the next new session the door records (""
// for the first prompt's first line): the chat's --title names its first
// session, not the ones /new starts.
func (d *Door) Retitle(title string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.attach.Meta.Title = title
}

// Switch leaves the session the door holds and takes the one ref names
// (zero for a new session, created by the next prompt). A session another
// process writes is refused and the door stays where it was.
func (d *Door) Switch(ref session.Ref) error {
	old, oldLock, oldRef := d.prev, d.lock, d.ref
	d.prev, d.lock, d.ref = nil, nil, session.Ref{}
	if !ref.IsZero() {
		if err := d.hold(ref); err != nil {
			d.prev, d.lock = old, oldLock
			if old != nil {
				d.ref = oldRef
			}
			return err
		}
	}
	oldLock.Release()
	return nil
}

// Close lets go of the session and ends the MCP servers and workspaces.
func (d *Door) Close() error {
	d.lock.Release()
	d.lock = nil
	if d.mcp != nil {
		d.mcp.Close()
	}
	d.replay.close()
	return d.wss.Close()
}

// Attached is what a prompt's run was: its configuration, its result and
// the session it recorded into.
type Attached struct {
	Config transcript.Config
	Result *agent.Result
	// Session is the session recorded into (zero when none).
	Session session.Ref
	// Provider is the client the prompt ran on (a reflection on close
	// reuses it).
	Provider provider.Provider
}

// Run runs one prompt as one attach of the door's session: the settings
// resolved over the session as it stands, the provider and the tool
// surface built, the config record appended with the run's first record.
// An error before the loop starts leaves the record untouched.
func (d *Door) Run(ctx context.Context, p Prompt) (*Attached, error) {
	w, settings := d.world, d.Settings()
	s := &settings
	if p.Compact && d.prev == nil {
		return nil, agent.ErrNothingToCompact
	}
	rc, err := Resolve(w, s, d.cfg, d.prev)
	if err != nil {
		return nil, err
	}
	d.recordSent(&rc)
	prov, err := d.providerFor(settings, rc.Provider)
	if err != nil {
		return nil, err
	}
	ledger := &agent.Ledger{}
	title := p.Text
	if p.Compact {
		title = ""
	}
	rec := d.record(&rc, title)
	tools, tracker, err := surfaceOn(w, &d.wss, d.mcp, &rc, ToolSetup{Only: s.Tools, Asker: d.attach.Asker,
		Subagent: d.children(prov, ledger, rec), Subagents: d.cfg.Subagents, Config: d.cfg})
	if err != nil {
		return nil, err
	}
	history := d.history(rc)
	trustPrompts(tracker, rc, d.prev, p.Text)
	steer := p.Steer
	if steer != nil {
		// What the person types mid-run is a prompt too.
		steer = func() []string {
			typed := p.Steer()
			tracker.TrustText(typed...)
			return typed
		}
	}
	text := p.Text
	var images []transcript.Block
	if !p.Compact {
		if text, images, err = attachFiles(rc.Workspace, p.Text, p.Files, !trusted(rc), &history); err != nil {
			return nil, err
		}
	}
	if err := d.images(prov, &history, images); err != nil {
		return nil, err
	}
	var recorder agent.Recorder
	if rec != nil {
		recorder = rec
	}
	if p.Configured != nil {
		p.Configured(rc)
	}
	var watch func(agent.Event)
	if p.Watch != nil {
		watch = func(ev agent.Event) { p.Watch(ev, history.Taint.Merge(tracker.Taint())) }
	}
	res, runErr := agent.Run(ctx, agent.Options{
		Provider: prov, Tools: tools, Tracker: tracker, Config: rc, Recorder: recorder, Prices: d.cfg.Prices(),
		History: history, Now: w.clock(), Log: p.Log, Ledger: ledger, OnEvent: watch, Steer: steer,
		CompactOnly: p.Compact, CompactInstructions: compactInstructions(p), Attach: images,
	}, prompt(p, text))
	out := &Attached{Config: rc, Result: res, Provider: prov}
	if rec != nil {
		if cerr := rec.Close(); cerr != nil && runErr == nil {
			runErr = cerr
		}
		d.adopt(rec)
	}
	if rec != nil && rec.Writer() != nil {
		out.Session = d.ref
	}
	if res == nil && errors.Is(runErr, agent.ErrCostBudgetUnpriced) {
		runErr = fmt.Errorf("--max-cost-usd needs a price for %s/%s: mecha's table has none; set one in config.toml", rc.Provider, rc.Model)
	}
	if res == nil {
		return nil, runErr
	}
	return out, runErr
}

// trustPrompts gives the interlock the hosts trusted text names (its rule
// on where a destination came from, tool.Held): the system prompt (the
// instructions, a trusted workspace's AGENTS.md, the learned rules, none
// of it from untrusted content), the prompt as the person typed it, and
// the session's earlier prompts and steering as typed (cut before the
// files an @mention inlined, which are the workspace's words, not the
// person's; none of an imported session). Once per attach, before its
// first call.
func trustPrompts(tr *tool.Tracker, rc transcript.Config, prev *session.Session, typed string) {
	if rc.SystemPrompt != nil {
		tr.TrustText(*rc.SystemPrompt)
	}
	tr.TrustText(typed)
	if prev == nil || prev.Meta.ImportedFrom != nil {
		// An imported session's user messages are another harness's
		// rendering (command output, reminders beside the prompts): not
		// known to be typed, so not trusted.
		return
	}
	for _, m := range prev.Messages() {
		if m.Role != transcript.RoleUser {
			continue
		}
		for _, b := range m.Content {
			if b.Type == transcript.BlockText {
				tr.TrustText(transcript.Typed(b.Text))
			}
		}
	}
}

// prompt is the text a prompt sends (none for a compaction).
func prompt(p Prompt, text string) string {
	if p.Compact {
		return ""
	}
	return text
}

// compactInstructions are the instructions of a compaction asked for.
func compactInstructions(p Prompt) string {
	if p.Compact {
		return p.Text
	}
	return ""
}

// history is what the attach continues from: the session's conversation
// and the taint its checkpoints recorded, with the taint of the system
// prompt's learned rules merged in (a rule learned from private
// reflections starts the attach private, before any tool runs).
func (d *Door) history(rc transcript.Config) agent.History {
	var h agent.History
	if d.prev != nil {
		h = agent.HistoryOf(d.prev)
	}
	return learnedTaint(h, rc)
}

// learnedTaint makes an attach whose system prompt holds a learned rule
// marked private start private, as if it had read the private data the
// rule was distilled from: the interlock then treats the prompt like that
// data.
func learnedTaint(h agent.History, rc transcript.Config) agent.History {
	h.Taint, h.TaintWhy = learn.PromptTaint(h.Taint, h.TaintWhy, rc.SystemPrompt)
	return h
}

// adopt takes the session a prompt recorded into: a new one becomes the
// door's, held as a resumed one is; either is reloaded for the next prompt.
func (d *Door) adopt(rec *session.Lazy) {
	wr := rec.Writer()
	if wr == nil {
		return
	}
	if d.prev == nil {
		if err := d.hold(wr.Ref()); err != nil {
			fmt.Fprintf(d.world.errw(), "note: %v\n", err)
			d.ref = wr.Ref()
		}
		return
	}
	if store, err := d.world.Store(); err == nil {
		if s, err := store.Load(d.ref); err == nil {
			d.prev = s
		}
	}
}

// children is how the agent tool runs a child: on the attach's provider,
// budgets carved from the run's ledger, each child recorded as a session of
// its own naming the run's (none when the run records nothing).
func (d *Door) children(prov provider.Provider, ledger *agent.Ledger, rec *session.Lazy) *subagent.Setup {
	w := d.world
	sub := &subagent.Setup{Provider: func() (provider.Provider, error) { return prov, nil }, Prices: d.cfg.Prices(),
		Ledger: ledger, Now: w.clock(), Log: w.errw(), MCPServers: d.mcp.Record,
		ParentID: func() string {
			if rec == nil || rec.Writer() == nil {
				return ""
			}
			return rec.Writer().ID()
		}}
	if rec != nil {
		if store, err := d.world.Store(); err == nil {
			sub.Sessions = store
		}
	}
	return sub
}
