package tool

import (
	"context"
	"encoding/json"
)

// call is one call as the policy layers judge it: the tool's name, the
// input, and what that input can do (CapabilitiesOf), asked for once by
// the outermost layer and handed down. The interlock, the gate and the
// tracker read caps instead of asking the tool again, so the three judge
// a call by one answer, and a tool whose CapabilitiesOf does work (the
// "agent" tool parses its input and unions its child's tools) does it
// once per call.
type call struct {
	name  string
	input json.RawMessage
	caps  Capabilities
	// dests are the hosts the call would reach (DestinationsOf), read
	// only for a call that reaches the network; nil otherwise.
	dests []string
	// allowedBy is the gate whose question the person already answered
	// yes, inside the interlock's (see Policy): that gate does not ask
	// again. Nil: no gate's question has been asked.
	allowedBy *gated
}

// judge starts a call at the outermost layer: t's name and what input can
// do, asked for now (at call time, not when t was wrapped), and for a call
// that reaches the network, where it goes.
func judge(t Tool, input json.RawMessage) *call {
	c := &call{name: t.Spec().Name, input: input, caps: CapabilitiesOf(t, input)}
	if c.caps.ReachesNetwork {
		c.dests = DestinationsOf(t, input)
	}
	return c
}

// layer is a decorator of this package that runs a call judged above it.
// Each layer's Run judges the call itself and hands it to runCall, so a
// layer used alone judges once, and a stack of layers judges once at the
// top.
type layer interface {
	runCall(ctx context.Context, c *call) (Result, error)
}

// runJudged runs c on t: the judgement handed down when t is a layer,
// else t.Run with the input (another package's tool or decorator, which
// judges for itself if it must).
func runJudged(ctx context.Context, t Tool, c *call) (Result, error) {
	if l, ok := t.(layer); ok {
		return l.runCall(ctx, c)
	}
	return t.Run(ctx, c.input)
}
