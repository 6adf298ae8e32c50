package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Mode is the permission mode of a run: what happens when the model calls a
// tool that can change something (see NeedsPermission).
type Mode string

// Permission modes.
const (
	// ModeAsk asks an Asker before each call that needs permission. It is
	// the default.
	ModeAsk Mode = "ask"
	// ModeYes runs every call without asking.
	ModeYes Mode = "yes"
	// ModeReadOnly refuses every call that needs permission.
	ModeReadOnly Mode = "read-only"
)

// Modes lists the valid modes, the default first.
var Modes = []Mode{ModeAsk, ModeYes, ModeReadOnly}

// ParseMode parses a mode name. The empty string is the default, ModeAsk.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeAsk, nil
	case ModeAsk, ModeYes, ModeReadOnly:
		return m, nil
	}
	return "", fmt.Errorf("tool: unknown permission mode %q (want ask, yes or read-only)", s)
}

func (m Mode) String() string { return string(m) }

// NeedsPermission reports whether a tool with these capabilities can change
// something or reach outside: it modifies the workspace, runs commands,
// reaches the network or acts outward. Such calls go through the
// permission gate; anything else runs without asking in every mode.
func NeedsPermission(c Capabilities) bool {
	return c.ModifiesWorkspace || c.RunsCommands || c.ReachesNetwork || c.ActsOutward
}

// Request is what an Asker is asked to allow.
type Request struct {
	Tool         string
	Input        json.RawMessage
	Capabilities Capabilities
	// Reason, when set, says why the call is asked about beyond its
	// capabilities (the interlock's refusal it would otherwise be).
	Reason string
	// Permission, when set, is why the permission gate asks (ModeAsk):
	// what the call can do, "shell runs commands and reaches the network".
	// A question with both Reason and Permission is the interlock's and
	// the gate's at once (see Policy): yes allows the call past both, and
	// no other question about it follows.
	Permission string
}

// Asker asks someone whether a call may run. Confirm returns true to allow
// it. An error means the asking itself failed (not a refusal); the gate
// returns it as a harness error.
type Asker interface {
	Confirm(ctx context.Context, req Request) (bool, error)
}

// Messages of the results a gate returns for calls it does not run. Each
// starts with "denied" so the model (and a reader of the transcript) can
// tell a refusal from a tool failure.
const (
	msgDeniedByUser = "denied by the user"
	msgNoTerminal   = "denied: no terminal to ask for permission (use --yes to allow, or --read-only)"
)

// Gate wraps t so that calls needing permission (see NeedsPermission) are
// run, refused or asked about according to mode. In ModeAsk a nil asker
// means there is nobody to ask, and such calls are denied. An unknown mode
// denies such calls too: the gate fails closed.
//
// A call is judged by its own capabilities (CapabilitiesOf): an "agent"
// call whose child gets only readers needs no permission. Beneath the
// interlock, the gate reads the interlock's judgement of the call instead
// of asking for the capabilities again. A call that is
// not run returns a Result with IsError set and a message starting with
// "denied". The returned tool has t's Spec, Capabilities and call
// capabilities.
func Gate(t Tool, mode Mode, asker Asker) Tool { return newGate(t, mode, asker) }

func newGate(t Tool, mode Mode, asker Asker) *gated {
	if mode == "" {
		mode = ModeAsk
	}
	return &gated{inner: t, mode: mode, asker: asker}
}

type gated struct {
	inner Tool
	mode  Mode
	asker Asker
	// rules are the saved permission rules (Policy.Rules); nil: none.
	rules *Rules
}

func (g *gated) Spec() Spec                 { return g.inner.Spec() }
func (g *gated) Capabilities() Capabilities { return g.inner.Capabilities() }

// CapabilitiesOf forwards the wrapped tool's call capabilities.
func (g *gated) CapabilitiesOf(input json.RawMessage) (Capabilities, error) {
	return CapabilitiesOf(g.inner, input), nil
}

// Unwrap returns the tool the gate wraps.
func (g *gated) Unwrap() Tool { return g.inner }

func (g *gated) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	return g.runCall(ctx, judge(g.inner, input))
}

// verdict is what the gate does with a call.
type verdict int

const (
	verdictRun  verdict = iota // it runs without asking
	verdictAsk                 // it runs if the asker says yes
	verdictDeny                // it does not run, whatever anyone answers
)

// decide is what g does with c, judged by c's capabilities and the saved
// rules: a deny rule first, whatever the call can do, then an allow rule
// in the ask mode.
func (g *gated) decide(c *call) verdict {
	if _, ok := g.rules.Denies(c.name, c.input); ok {
		return verdictDeny
	}
	if !NeedsPermission(c.caps) {
		return verdictRun
	}
	switch g.mode {
	case ModeYes:
		return verdictRun
	case ModeAsk:
		if _, ok := g.rules.Allows(c.name, c.input); ok {
			return verdictRun
		}
		if g.asker == nil {
			return verdictDeny
		}
		return verdictAsk
	}
	return verdictDeny // read-only, or a mode the gate does not know
}

func (g *gated) runCall(ctx context.Context, c *call) (Result, error) {
	switch g.decide(c) {
	case verdictRun:
		return runJudged(ctx, g.inner, c)
	case verdictAsk:
		if c.allowedBy == g {
			return runJudged(ctx, g.inner, c) // asked already, in the interlock's question
		}
		ans, err := ask(ctx, g.asker, permissionRequest(c))
		if err != nil {
			return Result{}, fmt.Errorf("tool: asking permission for %s: %w", c.name, err)
		}
		if !ans.Allow {
			return denied(withReason(msgDeniedByUser, ans.Reason)), nil
		}
		return runJudged(ctx, g.inner, c)
	}
	if r, ok := g.rules.Denies(c.name, c.input); ok {
		return denied(fmt.Sprintf("denied by the permission rule deny %s (%s)", r, r.Source)), nil
	}
	switch g.mode {
	case ModeReadOnly:
		return denied(readOnlyMessage(c.name, c.caps)), nil
	case ModeAsk:
		return denied(msgNoTerminal), nil
	}
	return denied(fmt.Sprintf("denied: unknown permission mode %q", g.mode)), nil
}

// permissionRequest is the gate's question about c.
func permissionRequest(c *call) Request {
	return Request{Tool: c.name, Input: c.input, Capabilities: c.caps, Permission: c.name + " " + describe(c.caps)}
}

func denied(msg string) Result { return Result{Content: msg, IsError: true} }

// readOnlyMessage says why a call was refused in read-only mode:
// "denied: fs_write modifies the workspace and the run is in read-only mode".
func readOnlyMessage(name string, c Capabilities) string {
	what := describe(c)
	sep := " and"
	if strings.Contains(what, " and ") {
		sep = ", and"
	}
	return fmt.Sprintf("denied: %s %s%s the run is in read-only mode", name, what, sep)
}

// describe says what a tool needing permission can do, in words:
// "modifies the workspace", "runs commands and reaches the network".
func describe(c Capabilities) string {
	var parts []string
	if c.RunsCommands {
		parts = append(parts, "runs commands")
	}
	if c.ModifiesWorkspace {
		parts = append(parts, "modifies the workspace")
	}
	if c.ReachesNetwork {
		parts = append(parts, "reaches the network")
	}
	if c.ActsOutward {
		parts = append(parts, "acts outward in the user's name")
	}
	switch len(parts) {
	case 0:
		return "needs permission"
	case 1:
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}
