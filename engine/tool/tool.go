package tool

import (
	"context"
	"encoding/json"

	"github.com/mecha-agent/mecha/record/transcript"
)

// Capabilities is what a tool may do. The permission gate and the taint
// checkpoint are computed from these declarations, so a tool declares the
// widest thing it can do, not the usual thing.
type Capabilities struct {
	ReadsWorkspace    bool // reads workspace data: private data enters the conversation
	ModifiesWorkspace bool // writes, edits or deletes files
	RunsCommands      bool // executes programs
	ReachesNetwork    bool // may talk to other machines: data can leave with a call
	// ActsOutward is true when a call does something in the world on the
	// user's behalf (pays, books, posts, sends a message, invites someone)
	// whose harm needs no private data: an action asked for by untrusted
	// content is harm enough. It is distinct from ReachesNetwork (data can
	// leave): a mail server's send_email does both, a GET of a public page
	// only reaches the network. The interlock holds an acting call back
	// once the conversation holds untrusted content (see Interlock).
	ActsOutward bool
	// External is true when the tool's results may come from outside this
	// machine (a web page, an API, a command that reached the network): such
	// results are untrusted.
	External bool
	// UntrustedWorkspace is true when what the tool reads of the workspace
	// comes from a workspace its owner has not trusted (mecha trust): a
	// repository's files can be written by anyone, so such reads are
	// untrusted as well as private.
	UntrustedWorkspace bool
}

// Spec is what the model is told about a tool.
type Spec struct {
	Name        string
	Description string
	InputSchema json.RawMessage
}

// Result is what a tool call returns to the model. IsError marks a result
// the model should read as a failure (bad arguments, a path outside the
// workspace, a command that failed to start, a denied call).
type Result struct {
	Content string
	IsError bool
	// Files are the files the call wrote, with their content before (see
	// transcript.FileChange), recorded on the call's result for a rewind.
	Files []transcript.FileChange
}

// Tool is one callable tool.
type Tool interface {
	Spec() Spec
	Capabilities() Capabilities
	// Run executes the call. A problem the model should see is a Result with
	// IsError; a returned error means the harness itself failed (it is also
	// shown to the model, as an error result).
	Run(ctx context.Context, input json.RawMessage) (Result, error)
}

type callIDKey struct{}

// WithCallID returns ctx carrying the id of the tool call being run (the
// tool_use block's id), for a tool that records something naming the call
// that started it (a subagent's child session names its parent's call).
func WithCallID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, callIDKey{}, id)
}

// CallID returns the id WithCallID put in ctx, or "".
func CallID(ctx context.Context) string {
	id, _ := ctx.Value(callIDKey{}).(string)
	return id
}

// CallCapabilities is implemented by a tool whose capabilities depend on
// the call: the "agent" tool can do only what the tools a call hands its
// child can do. Capabilities stays the widest the tool can do with any
// input; CapabilitiesOf is what this input can do, and never more.
type CallCapabilities interface {
	CapabilitiesOf(input json.RawMessage) (Capabilities, error)
}

// CapabilitiesOf returns what a call of t with input can do: t's
// CapabilitiesOf when it has one, else its Capabilities. When the input
// cannot be judged (CapabilitiesOf returns an error: malformed, or naming
// something unknown) it is t's Capabilities, the widest: a call nobody can
// judge is judged by everything the tool could do.
func CapabilitiesOf(t Tool, input json.RawMessage) Capabilities {
	if cc, ok := t.(CallCapabilities); ok {
		if c, err := cc.CapabilitiesOf(input); err == nil {
			return c
		}
	}
	return t.Capabilities()
}

// Union is the capabilities of a and b together.
func (a Capabilities) Union(b Capabilities) Capabilities {
	return Capabilities{
		ReadsWorkspace:    a.ReadsWorkspace || b.ReadsWorkspace,
		ModifiesWorkspace: a.ModifiesWorkspace || b.ModifiesWorkspace,
		RunsCommands:      a.RunsCommands || b.RunsCommands,
		ReachesNetwork:    a.ReachesNetwork || b.ReachesNetwork,
		ActsOutward:       a.ActsOutward || b.ActsOutward,
		External:          a.External || b.External,

		UntrustedWorkspace: a.UntrustedWorkspace || b.UntrustedWorkspace,
	}
}
