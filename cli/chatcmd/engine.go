package chatcmd

import (
	"context"
	"sync"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// engine is the chat's side that is not the screen: the harness's door
// to the session the chat records into (held with its one-writer lock
// between prompts), the runs, the steering typed while they work. Each
// prompt is one attach of the door, resolved and recorded as "mecha run
// --resume" records one.
type engine struct {
	env   *cmdkit.Env // Err goes to the screen as notes
	base  context.Context
	door  *harness.Door
	given func(string) bool
	// overrides are settings changed by slash commands (/model): given.
	overrides map[string]bool
	asker     *asker
	send      func(tea.Msg)
	closeOnce sync.Once

	mu     sync.Mutex
	ref    session.Ref // the session, zero before the first prompt of a new one
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
func (e *engine) start(text string) { e.startRun(text, false) }

// startCompact compacts the session's conversation (/compact), in the
// background, with the person's instructions for the summary.
func (e *engine) startCompact(instructions string) { e.startRun(instructions, true) }

func (e *engine) startRun(text string, compact bool) {
	ctx, cancel := context.WithCancel(e.base)
	done := make(chan struct{})
	e.mu.Lock()
	e.cancel, e.done = cancel, done
	e.mu.Unlock()
	go func() {
		defer close(done)
		defer cancel()
		res, err := e.prompt(ctx, text, compact)
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

// current returns the session (zero before anything is recorded).
func (e *engine) current() session.Ref {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ref
}

// settings are the settings of the next prompt's attach.
func (e *engine) settings() harness.Settings { return e.door.Settings() }

// prompt runs one prompt over the session through the door: the history
// loaded as a resume loads it, the records appended as a run appends them.
func (e *engine) prompt(ctx context.Context, text string, compact bool) (*agent.Result, error) {
	var files []string
	if !compact {
		var err error
		if files, err = e.mentions(text); err != nil {
			return nil, err
		}
	}
	att, err := e.door.Run(ctx, harness.Prompt{Text: text, Files: files, Compact: compact, Steer: e.takeSteering,
		Configured: func(rc transcript.Config) {
			e.asker.setWorkspace(rc.Workspace)
			e.send(configMsg{rc})
		},
		Watch: func(ev agent.Event, taint transcript.Taint) { e.send(eventMsg{ev, taint}) },
	})
	ref := e.door.Session()
	e.mu.Lock()
	e.ref = ref
	e.mu.Unlock()
	if att == nil {
		return nil, err
	}
	return att.Result, err
}

// configMsg is the configuration of the attach about to run.
type configMsg struct{ rc transcript.Config }

// switchTo leaves the current session and holds the one ref names (zero
// for a new session, created with the next prompt). A session another
// process writes is refused, and the chat stays where it was.
func (e *engine) switchTo(ref session.Ref) (*session.Session, error) {
	if err := e.door.Switch(ref); err != nil {
		return nil, err
	}
	e.door.Retitle("") // --title named the chat's first session only
	s := e.door.Resumed()
	if s != nil {
		e.env.NoteForeignID(ref, s.HeaderID)
	}
	e.mu.Lock()
	e.ref = e.door.Session()
	e.steer = nil
	e.mu.Unlock()
	e.asker.reset()
	return s, nil
}

// close lets go of the session and what the chat started (once).
func (e *engine) close() {
	e.closeOnce.Do(func() { e.door.Close() })
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

var _ tool.Answerer = (*asker)(nil)
