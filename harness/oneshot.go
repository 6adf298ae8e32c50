package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/learn"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// QuestionMaxTokens bounds the answer to a Question.
const QuestionMaxTokens = 4096

// Question is what a tool-less attach asks: one prompt to a model offered
// no tool, recorded as a session of its own (a reflection, a
// distillation), whose prompt's provenance is on record before the model
// answers.
type Question struct {
	// System is the system prompt, recorded as it is.
	System string
	Prompt string
	// Taint is the provenance of what the prompt was made of (the session
	// reflected on, the reflections distilled): the taint the attach
	// starts from, and the checkpoint recorded right after the prompt, so
	// that a run killed while the model thinks leaves the prompt covered.
	// TaintWhy says where it came from.
	Taint    transcript.Taint
	TaintWhy string
	// Says ends the note naming the new session: "session: ID SAYS
	// (provider/model)".
	Says string
	// Provider, when set, answers instead of a client built for the
	// attach's provider ("mecha run --reflect" asks the run's own, on the
	// provider and model its Settings give).
	Provider provider.Provider
	// Log receives the loop's lines (nil: none).
	Log io.Writer
}

// Ask opens a tool-less attach, asks q and closes it: what "mecha
// reflect" and "mecha distill" do. The attach's Settings give the provider
// and model (resolved as a new run's: -p, else config.toml's
// default_provider; -m, else that provider's default model), MockScript,
// RequestTimeout and Workspace, which is only recorded: no tool works in
// it. Everything else of the configuration is a question's: no tool (an
// empty list, as recorded), one model call of at most QuestionMaxTokens,
// read-only, under the interlock, no sandbox. No MCP server is started.
// The session is created with the Attach's Meta (its reflects_on or
// distill, its title) and is always recorded.
//
// An answer that is not one (the model stopped for another reason than
// ending its turn, or said nothing) is an error naming the session, which
// keeps what the model did.
func Ask(ctx context.Context, w *World, a Attach, q Question) (*Attached, error) {
	d, err := newDoor(w, a)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ask(ctx, q)
}

func (d *Door) ask(ctx context.Context, q Question) (*Attached, error) {
	s := d.Settings()
	rc := d.questionConfig(&s, q.System)
	prov := q.Provider
	if prov == nil {
		var err error
		if prov, err = d.providerFor(s, rc.Provider); err != nil {
			return nil, err
		}
	}
	rec := &learn.PromptCovered{Lazy: &session.Lazy{Open: func(transcript.Record) (*session.Writer, error) {
		return d.startRecord(&rc, q.Prompt, q.Says)
	}}, Taint: q.Taint, Now: d.world.now}
	res, runErr := agent.Run(ctx, agent.Options{Provider: prov, Tools: &tool.Registry{}, Config: rc, Recorder: rec, Prices: d.cfg.Prices(),
		History: learnedTaint(agent.History{Taint: q.Taint, TaintWhy: q.TaintWhy}, rc), Now: d.world.clock(), Log: q.Log}, q.Prompt)
	closeErr := rec.Close()
	switch w := rec.Writer(); {
	case runErr != nil:
		return nil, runErr
	case closeErr != nil:
		return nil, closeErr
	case w == nil:
		return nil, errors.New("nothing was recorded")
	case res.StopReason != agent.StopEndTurn || strings.TrimSpace(res.Text) == "":
		return nil, fmt.Errorf("the model gave no answer (%s); the session %s keeps what it did", res.StopReason, w.ID())
	default:
		return &Attached{Config: rc, Result: res, Session: w.Ref(), Provider: prov}, nil
	}
}

// questionConfig is the configuration of a question asked under s.
func (d *Door) questionConfig(s *Settings, system string) transcript.Config {
	rc := transcript.Config{MechaVersion: d.world.Version, Workspace: s.Workspace, SystemPrompt: &system,
		Tools: []string{}, ToolSpecs: []transcript.ToolSpec{}, CachePrompt: true,
		MaxTokens: QuestionMaxTokens, MaxTurns: 1, CompactKeepRecent: DefaultCompactKeepRecent,
		PermissionMode: string(tool.ModeReadOnly), Trifecta: string(tool.TrifectaRefuse), Sandbox: sandbox.ModeNone}
	resolveModel(s, d.cfg, false, &rc)
	recordSent(&rc)
	return rc
}
