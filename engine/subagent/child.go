package subagent

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// childRun is what is known of a child once it ran (or failed to start
// after its tools were built).
type childRun struct {
	tracker *tool.Tracker
	rec     *session.Lazy // nil when nothing is recorded
	cfg     transcript.Config
}

// session is the child's session id, "" when none was created.
func (c *childRun) session() string {
	if c.rec == nil || c.rec.Writer() == nil {
		return ""
	}
	return c.rec.Writer().ID()
}

// child runs the sub-task under budget. The returned childRun is nil
// when the child could not be set up (nothing ran, nothing was recorded).
func (t *Tool) child(ctx context.Context, in Input, budget agent.Budget) (*agent.Result, *childRun, error) {
	prov, err := t.setup.Provider()
	if err != nil {
		return nil, nil, fmt.Errorf("the subagent's provider: %w", err)
	}
	c := &childRun{tracker: &tool.Tracker{}}
	// The child trusts the hosts its parent trusts, and those its task
	// names: the parent's interlock judged the task's hosts when it let
	// this call run (a child given a tool that reaches the network makes
	// the call one that does).
	c.tracker.TrustHosts(t.tracker.TrustedHosts()...)
	c.tracker.TrustText(in.Task)
	all, err := t.surface(c.tracker)
	if err != nil {
		return nil, nil, fmt.Errorf("the subagent's tools: %w", err)
	}
	tools, err := all.Restrict(in.Tools)
	if err != nil {
		return nil, nil, fmt.Errorf("the subagent's tools: %w", err)
	}
	c.cfg = t.childConfig(tools, budget)
	// The child's conversation starts from the parent's as the parent's
	// model had it when it made this call: its task was written from it.
	judged := t.tracker.Judged()
	history := agent.History{Taint: judged.Taint, TaintWhy: "the parent conversation"}
	if why := startWhy(judged); why != "" {
		history.TaintWhy = why
	}
	if parent := t.parentID(); parent != "" && t.setup.Sessions != nil {
		c.rec = t.recorder(parent, tool.CallID(ctx), in.Task, &c.cfg)
		defer c.rec.Close()
	}
	var rec agent.Recorder
	if c.rec != nil {
		rec = c.rec
	}
	res, err := agent.Run(ctx, agent.Options{
		Provider: prov, Tools: tools, Tracker: c.tracker, Config: c.cfg, Recorder: rec,
		Prices: t.setup.Prices, History: history, Now: t.setup.Now, Log: t.log(),
	}, in.Task)
	if c.rec != nil {
		if cerr := c.rec.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	return res, c, err
}

// startWhy says what made the parent's conversation tainted, for the
// child's interlock messages.
func startWhy(st tool.TaintState) string {
	var parts []string
	if st.PrivateBy != "" {
		parts = append(parts, "private: "+st.PrivateBy)
	}
	if st.UntrustedBy != "" && st.UntrustedBy != st.PrivateBy {
		parts = append(parts, "untrusted: "+st.UntrustedBy)
	}
	if len(parts) == 0 {
		return ""
	}
	return "the parent conversation (" + strings.Join(parts, "; ") + ")"
}

func (t *Tool) parentID() string {
	if t.setup.ParentID == nil {
		return ""
	}
	return t.setup.ParentID()
}

// childConfig is the child's config record: the parent's run settings,
// the child's tools and its carved budgets.
func (t *Tool) childConfig(tools *tool.Registry, b agent.Budget) transcript.Config {
	rc := t.cfg
	rc.Tools = tools.Names()
	rc.ToolSpecs = tools.TranscriptSpecs()
	rc.MCPServers = nil
	if t.setup.MCPServers != nil {
		rc.MCPServers = t.setup.MCPServers(rc.Tools)
	}
	rc.MaxTurns = b.Turns
	rc.MaxOutputTokens = b.OutputTokens
	rc.MaxCostUSD = b.CostUSD
	return rc
}

// recorder creates the child's session with its first record: the meta
// names the parent's session and call, the config record comes first.
func (t *Tool) recorder(parent, callID, task string, rc *transcript.Config) *session.Lazy {
	return &session.Lazy{Open: func(transcript.Record) (*session.Writer, error) {
		w, err := t.setup.Sessions.Create(transcript.Meta{Provider: rc.Provider, Model: rc.Model, Workspace: rc.Workspace,
			Title:  textfmt.Clip("subagent: "+textfmt.OneLine(task), 80),
			Parent: &transcript.ParentCall{Session: parent, CallID: callID}})
		if err != nil {
			return nil, err
		}
		if t.setup.Log != nil {
			fmt.Fprintf(t.setup.Log, "  subagent session: %s (parent %s, call %s)\n", w.ID(), parent, callID)
		}
		rc.At = t.now()
		if err := w.Append(rc); err != nil {
			w.Close()
			return nil, err
		}
		return w, nil
	}}
}

func (t *Tool) now() time.Time {
	if t.setup.Now != nil {
		return t.setup.Now().UTC()
	}
	return time.Now().UTC()
}

// flowBack merges the child's taint into the parent's tracker: the
// parent's conversation now holds what the child's answer was made from.
// Where the parent's taint was first set by this tool's call itself (by
// what the child could do), the child's reason replaces it: a refusal
// later in the parent names the child's actual source.
func (t *Tool) flowBack(c *childRun) {
	st := c.tracker.State()
	if st.Taint.Clean() {
		return
	}
	from := "the subagent"
	if id := c.session(); id != "" {
		from += " (session " + id + ")"
	}
	t.tracker.Absorb(st.Taint, from+": "+st.PrivateBy, from+": "+st.UntrustedBy, Name)
}

// result is the parent's tool result: the child's final answer and a
// trailer naming its session and how it ended.
func result(res *agent.Result, c *childRun, err error) tool.Result {
	var b strings.Builder
	isErr := err != nil
	switch {
	case res == nil && err != nil:
		b.WriteString("the subagent failed: " + textfmt.OneLine(err.Error()))
	case err != nil:
		b.WriteString("the subagent failed: " + textfmt.OneLine(err.Error()))
		if res.Text != "" {
			b.WriteString("\nits last answer:\n" + res.Text)
		}
	case res.Text == "":
		b.WriteString("(the subagent gave no answer)")
	default:
		b.WriteString(res.Text)
	}
	b.WriteString("\n\n" + trailer(res, c))
	return tool.Result{Content: b.String(), IsError: isErr}
}

func trailer(res *agent.Result, c *childRun) string {
	s := TrailerPrefix
	if c != nil && c.session() != "" {
		s += "session " + c.session()
	} else {
		s += "not recorded"
	}
	if res != nil {
		s += fmt.Sprintf(": %d %s, %s", res.Turns, textfmt.Plural(res.Turns, "turn", "turns"), res.StopReason)
	}
	return s + "]"
}

func (t *Tool) log() io.Writer {
	if t.setup.Log == nil {
		return nil
	}
	return &prefixed{w: t.setup.Log, prefix: "  [agent] ", bol: true}
}

// prefixed writes each line it is given with a prefix, so that a child's
// tool activity reads apart from the parent's.
type prefixed struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	bol    bool
}

func (p *prefixed) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []byte
	for _, c := range b {
		if p.bol {
			out = append(out, p.prefix...)
		}
		out = append(out, c)
		p.bol = c == '\n'
	}
	if _, err := p.w.Write(out); err != nil {
		return 0, err
	}
	return len(b), nil
}
