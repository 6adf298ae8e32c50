package chatcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/runcmd"
	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// engine is the chat's side that is not the screen: the session the chat
// records into (held with its one-writer lock between prompts), the runs,
// the steering typed while they work. Each prompt is one agent.Run, an
// attach resolved and recorded as "mecha run --resume" records one.
type engine struct {
	env   *cmdkit.Env // Err goes to the screen as notes
	base  context.Context
	cfg   *config.Config
	opts  *runcmd.Options
	given func(string) bool
	// overrides are settings changed by slash commands (/model): given.
	overrides map[string]bool
	mcp       *mcpclient.Set
	asker     *asker
	send      func(tea.Msg)
	wss       cmdkit.Workspaces
	closeOnce sync.Once

	mu     sync.Mutex
	path   string // the session's file, "" before the first prompt of a new one
	id     string
	lock   *session.Lock
	steer  []string
	cancel context.CancelFunc
	done   chan struct{} // closed when the current run has ended
}

// runDoneMsg says a prompt's run has ended.
type runDoneMsg struct {
	res *agent.Result
	err error
}

// eventMsg is one event of the run, with the taint and session as they
// stand after it.
type eventMsg struct {
	ev    agent.Event
	taint transcript.Taint
}

func (e *engine) isGiven(name string) bool {
	e.mu.Lock()
	over := e.overrides[name]
	e.mu.Unlock()
	if over {
		return true
	}
	return e.given != nil && e.given(name)
}

// start runs text as the next prompt of the session, in the background.
func (e *engine) start(text string) {
	ctx, cancel := context.WithCancel(e.base)
	done := make(chan struct{})
	e.mu.Lock()
	e.cancel, e.done = cancel, done
	e.mu.Unlock()
	go func() {
		defer close(done)
		defer cancel()
		res, err := e.prompt(ctx, text)
		e.send(runDoneMsg{res, err})
	}()
}

// interrupt cancels the run in progress; its records are closed as an
// interrupted run's are.
func (e *engine) interrupt() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.cancel != nil {
		e.cancel()
	}
}

// wait waits for the run in progress, if any, to end.
func (e *engine) wait() {
	e.mu.Lock()
	done := e.done
	e.mu.Unlock()
	if done != nil {
		<-done
	}
}

// queueSteering keeps text to send beside the results of the calls
// running now.
func (e *engine) queueSteering(text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.steer = append(e.steer, text)
}

// takeSteering is agent.Options.Steer: what was typed since it was last
// asked.
func (e *engine) takeSteering() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.steer
	e.steer = nil
	return s
}

// current returns the session's path and id ("" before anything is recorded).
func (e *engine) current() (string, string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.path, e.id
}

// load reads the session the chat records into (nil for a new one).
func (e *engine) load() (*session.Session, error) {
	path, _ := e.current()
	if path == "" {
		return nil, nil
	}
	return session.Load(path)
}

// attach resolves the configuration of the next prompt's attach.
func (e *engine) attach(prev *session.Session, task string) (*runcmd.Options, transcript.Config, error) {
	e.mu.Lock()
	o := *e.opts
	e.mu.Unlock()
	o.Task = task
	o.Given = e.isGiven
	if prev != nil {
		o.Resume = prev.Path
	}
	rc, err := runcmd.ResolveConfig(&o, e.cfg, prev)
	return &o, rc, err
}

// prompt runs one prompt over the session: the history loaded as a resume
// loads it, the records appended as a run appends them.
func (e *engine) prompt(ctx context.Context, text string) (*agent.Result, error) {
	prev, err := e.load()
	if err != nil {
		return nil, err
	}
	o, rc, err := e.attach(prev, text)
	if err != nil {
		return nil, err
	}
	prov, err := cmdkit.NewProvider(e.env, rc.Provider, cmdkit.ProviderSetup{MockScript: o.MockScript,
		Config: e.cfg, RequestTimeout: o.RequestTimeout})
	if err != nil {
		return nil, err
	}
	mcpTools, err := e.mcp.Tools()
	if err != nil {
		return nil, err
	}
	e.asker.setWorkspace(rc.Workspace)
	tools, tracker, err := cmdkit.BuildTools(e.env, &e.wss, rc, cmdkit.ToolSetup{Only: o.Tools, MCP: mcpTools, Asker: e.asker})
	if err != nil {
		return nil, err
	}
	rc.Tools, rc.ToolSpecs, rc.MCPServers = tools.Names(), tools.TranscriptSpecs(), e.mcp.Record(tools.Names())
	e.send(configMsg{rc})
	var history agent.History
	if prev != nil {
		history = agent.HistoryOf(prev)
	}
	history = runcmd.LearnedTaint(history, rc)
	quiet := *o
	quietEnv := *e.env
	quietEnv.Err = io.Discard // the screen shows the session in its status line
	quiet.Env = &quietEnv
	rec := &session.Lazy{Open: func(transcript.Record) (*session.Writer, error) {
		return runcmd.StartRecord(&quiet, &rc, prev)
	}}
	res, runErr := agent.Run(ctx, agent.Options{
		Provider: prov, Tools: tools, Tracker: tracker, Config: rc, Recorder: rec, Prices: e.cfg.Prices,
		History: history, Now: e.env.Now, Log: io.Discard, Steer: e.takeSteering,
		OnEvent: func(ev agent.Event) { e.send(eventMsg{ev, history.Taint.Merge(tracker.Taint())}) },
	}, text)
	if cerr := rec.Close(); cerr != nil && runErr == nil {
		runErr = cerr
	}
	if w := rec.Writer(); w != nil && prev == nil {
		e.adopt(w.Path(), w.ID())
	}
	if res == nil && errors.Is(runErr, agent.ErrCostBudgetUnpriced) {
		runErr = fmt.Errorf("--max-cost-usd needs a price for %s/%s in config.toml", rc.Provider, rc.Model)
	}
	return res, runErr
}

// configMsg is the configuration of the attach about to runcmd.
type configMsg struct{ rc transcript.Config }

// adopt makes a session just created the chat's, held until the chat
// leaves it.
func (e *engine) adopt(path, id string) {
	lock, err := session.Acquire(path)
	if err != nil {
		fmt.Fprintf(e.env.Err, "note: %v\n", err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.path, e.id, e.lock = path, id, lock
}

// switchTo leaves the current session and holds the one at path ("" for a
// new session, created with the next prompt). A session another process
// writes is refused, and the chat stays where it was.
func (e *engine) switchTo(path string) (*session.Session, error) {
	var (
		lock *session.Lock
		s    *session.Session
		err  error
	)
	if path != "" {
		if lock, err = session.Acquire(path); err != nil {
			return nil, err
		}
		if s, err = session.Load(path); err != nil {
			lock.Release()
			return nil, err
		}
		e.env.NoteForeignID(path, s.HeaderID)
	}
	e.mu.Lock()
	old := e.lock
	e.path, e.lock, e.id = path, lock, ""
	if s != nil {
		e.id = s.Meta.ID
	}
	e.steer = nil
	e.mu.Unlock()
	old.Release()
	e.asker.reset()
	return s, nil
}

// close lets go of the session and what the chat started (once).
func (e *engine) close() {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		lock := e.lock
		e.lock = nil
		e.mu.Unlock()
		lock.Release()
		e.mcp.Close()
		e.wss.Close()
	})
}

// taintState names a taint as the status line shows it.
func taintState(t transcript.Taint) string {
	switch {
	case t.Private && t.Untrusted:
		return "armed"
	case t.Private:
		return "private"
	case t.Untrusted:
		return "untrusted"
	}
	return "clean"
}

var _ tool.Asker = (*asker)(nil)
