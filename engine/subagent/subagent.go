package subagent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Name is the tool's name.
const Name = "agent"

// TrailerPrefix starts the last line of every result of the tool, which
// names the child's session (or says there is none) and how it ended.
const TrailerPrefix = "[subagent "

// Setup is what a child run needs from the command that offers the tool.
type Setup struct {
	// Provider gives the client the child runs on: the parent's provider
	// and model (asked for at the first call only).
	Provider func() (provider.Provider, error)
	Prices   pricing.Table
	// Ledger is the parent run's (agent.Options.Ledger): children carve
	// their budgets from it and count their spending in it. Nil: a ledger
	// of the tool's own, which knows only what children spent.
	Ledger *agent.Ledger
	// Sessions is the store the child's session is created in; nil, or a
	// ParentID that returns "", records nothing (the parent records
	// nothing either).
	Sessions *session.Store
	// ParentID returns the parent's session id, "" while it has none.
	ParentID func() string
	// MCPServers describes the MCP servers among the child's tools, as a
	// config record names them (nil: none).
	MCPServers func(offered []string) []transcript.MCPServer
	Now        func() time.Time
	// Log receives the child's lines of tool activity, each marked as the
	// subagent's, and the child's session id.
	Log io.Writer
}

// Surface builds the tools a child may be given, decorated for the
// child's tracker as the parent's are for the parent's.
type Surface func(tr *tool.Tracker) (*tool.Registry, error)

// Tool is the "agent" tool.
type Tool struct {
	setup   Setup
	cfg     transcript.Config
	parent  *tool.Registry
	tracker *tool.Tracker
	surface Surface
}

// New returns the tool. cfg is the parent run's configuration (a child
// runs on its provider, model, system prompt, sampling, workspace,
// permission mode, trifecta policy and sandbox); parentTools are the
// parent's other tools, the most a child can be given; tracker is the
// parent's taint tracker; surface builds a child's tools.
func New(setup Setup, cfg transcript.Config, parentTools *tool.Registry, tracker *tool.Tracker, surface Surface) *Tool {
	if setup.Ledger == nil {
		setup.Ledger = &agent.Ledger{}
	}
	return &Tool{setup: setup, cfg: cfg, parent: parentTools, tracker: tracker, surface: surface}
}

// Spec implements tool.Tool.
func (t *Tool) Spec() tool.Spec {
	names := strings.Join(t.parent.Names(), ", ")
	if names == "" {
		names = "none"
	}
	return tool.Spec{
		Name: Name,
		Description: "Run a self-contained sub-task as a subagent: a separate conversation with its own context, " +
			"given some of your tools, whose final answer is this call's result. Budgets (turns, output tokens, cost) " +
			"come out of what this run has left. Tools you can give it (default: all of them): " + names + ".",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` +
			`"task":{"type":"string","description":"what the subagent is to do, with everything it needs to know"},` +
			`"tools":{"type":"array","items":{"type":"string"},"description":"the tools it may use (default: all yours)"},` +
			`"max_turns":{"type":"integer","minimum":1,"description":"the most model calls it may make"},` +
			`"max_output_tokens":{"type":"integer","minimum":1,"description":"the most output tokens it may produce"},` +
			`"max_cost_usd":{"type":"number","exclusiveMinimum":0,"description":"the most it may cost"}},` +
			`"required":["task"],"additionalProperties":false}`),
	}
}

// Capabilities implements tool.Tool: the union of the capabilities of
// every tool a child can be given, asked for now (a tool's may depend on
// what is enforced when it is asked). It is what a call that cannot be
// judged (see CapabilitiesOf) is judged by.
func (t *Tool) Capabilities() tool.Capabilities { return union(t.parent) }

// CapabilitiesOf implements tool.CallCapabilities: the union of the
// capabilities of the tools this call gives its child (all of them when it
// names none), the very tools the child is then built with (given). An
// input that does not parse, or names a tool the run does not have, is an
// error: the caller judges the call by Capabilities.
func (t *Tool) CapabilitiesOf(raw json.RawMessage) (tool.Capabilities, error) {
	in, _, err := t.parse(raw)
	if err != nil {
		return tool.Capabilities{}, err
	}
	tools, err := t.given(in.Tools)
	if err != nil {
		return tool.Capabilities{}, err
	}
	return union(tools), nil
}

// given is the one place a call's tool names become the child's tools:
// the parent's tools by those names. Both the call's capabilities and the
// child's surface (child restricts its own registry to given's names) come
// from it, so what the call is judged by and what the child can do cannot
// disagree.
func (t *Tool) given(names []string) (*tool.Registry, error) {
	for _, n := range names {
		if n == Name {
			return nil, errors.New("a subagent cannot be given the agent tool: subagents do not start subagents")
		}
		if _, ok := t.parent.Get(n); !ok {
			return nil, fmt.Errorf("the tool %q is not one of this run's (available: %s)", n, strings.Join(t.parent.Names(), ", "))
		}
	}
	return t.parent.Restrict(names)
}

func union(r *tool.Registry) tool.Capabilities {
	var c tool.Capabilities
	for _, pt := range r.Tools() {
		c = c.Union(pt.Capabilities())
	}
	return c
}

// Input is what the model passes.
type Input struct {
	Task            string   `json:"task"`
	Tools           []string `json:"tools"`
	MaxTurns        *int     `json:"max_turns"`
	MaxOutputTokens *uint64  `json:"max_output_tokens"`
	MaxCostUSD      *float64 `json:"max_cost_usd"`
}

// parse reads and checks the input: one line the model can act on.
func (t *Tool) parse(raw json.RawMessage) (Input, agent.Budget, error) {
	var in Input
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, agent.Budget{}, fmt.Errorf("bad input: %v", err)
	}
	var want agent.Budget
	switch {
	case strings.TrimSpace(in.Task) == "":
		return in, want, errors.New("bad input: the task is empty")
	case in.MaxTurns != nil && *in.MaxTurns < 1:
		return in, want, errors.New("bad input: max_turns must be at least 1")
	case in.MaxOutputTokens != nil && *in.MaxOutputTokens < 1:
		return in, want, errors.New("bad input: max_output_tokens must be at least 1")
	case in.MaxCostUSD != nil && !(*in.MaxCostUSD > 0 && !math.IsInf(*in.MaxCostUSD, 1)):
		return in, want, errors.New("bad input: max_cost_usd must be a number more than 0")
	}
	if in.Tools == nil {
		in.Tools = t.parent.Names()
	}
	tools, err := t.given(in.Tools)
	if err != nil {
		return in, want, err
	}
	in.Tools = tools.Names()
	if in.MaxTurns != nil {
		want.Turns = *in.MaxTurns
	}
	want.OutputTokens, want.CostUSD = in.MaxOutputTokens, in.MaxCostUSD
	return in, want, nil
}

func errResult(format string, a ...any) tool.Result {
	return tool.Result{Content: fmt.Sprintf(format, a...), IsError: true}
}

// Run implements tool.Tool: the child run, start to end.
func (t *Tool) Run(ctx context.Context, raw json.RawMessage) (tool.Result, error) {
	in, want, err := t.parse(raw)
	if err != nil {
		return errResult("%v", err), nil
	}
	budget, hold, err := t.setup.Ledger.Carve(t.cfg, t.setup.Prices, want)
	if err != nil {
		return errResult("the subagent was not started: %v", err), nil
	}
	res, c, runErr := t.child(ctx, in, budget)
	if res != nil {
		hold.Done(res.Turns, res.Usage)
	} else {
		hold.Done(0, transcript.Usage{})
	}
	if c != nil {
		t.flowBack(c)
	}
	out := result(res, c, runErr)
	if runErr != nil && ctx.Err() != nil {
		return out, ctx.Err()
	}
	return out, nil
}
