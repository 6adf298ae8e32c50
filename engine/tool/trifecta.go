package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
)

// Trifecta is the policy of the interlock (see Interlock): what happens to
// a call that could send data out of a conversation that holds private
// data and untrusted content, to a call that acts outward in a
// conversation that holds untrusted content, and to a call that would
// reach a host only untrusted content named (see Held).
type Trifecta string

// Trifecta policies.
const (
	// TrifectaRefuse does not run the call. It is the default.
	TrifectaRefuse Trifecta = "refuse"
	// TrifectaAsk asks a person; with nobody to ask, the call is refused.
	TrifectaAsk Trifecta = "ask"
	// TrifectaOff runs the call: the interlock is off.
	TrifectaOff Trifecta = "off"
)

// Trifectas lists the policies, the default first.
var Trifectas = []Trifecta{TrifectaRefuse, TrifectaAsk, TrifectaOff}

// ParseTrifecta parses a policy name; "" is the default, TrifectaRefuse.
func ParseTrifecta(s string) (Trifecta, error) {
	switch p := Trifecta(s); p {
	case "":
		return TrifectaRefuse, nil
	case TrifectaRefuse, TrifectaAsk, TrifectaOff:
		return p, nil
	}
	return "", fmt.Errorf("tool: unknown trifecta policy %q (want refuse, ask or off)", s)
}

func (p Trifecta) String() string { return string(p) }

// RefusalPrefix starts the result of every call the interlock does not
// run, by any of its rules (see Held).
const RefusalPrefix = "refused: lethal trifecta:"

// CanLeak says why a tool with these capabilities could send data out of
// the conversation: "it runs commands with the network available" or "it
// reaches the network"; "" when it cannot. A tool that runs commands in a
// sandbox without the network declares no ReachesNetwork, and is believed.
func CanLeak(c Capabilities) string {
	switch {
	case c.ReachesNetwork && c.RunsCommands:
		return "it runs commands with the network available"
	case c.ReachesNetwork:
		return "it reaches the network"
	}
	return ""
}

// CanAct says why a call with these capabilities acts in the world on
// the user's behalf: "it acts outward in the user's name" (ActsOutward);
// "" when it does not.
func CanAct(c Capabilities) string {
	if c.ActsOutward {
		return "it acts outward in the user's name"
	}
	return ""
}

// Held says why the interlock holds back (refuses, or asks about) a call
// with capabilities c in a conversation in state st, as the refusal says
// it (starting with RefusalPrefix, without what the policy then did); ""
// when the call runs. far are the call's destinations (DestinationsOf)
// whose provenance is not trusted (Tracker.Untrusted): no trusted text
// named them, config does not list them, and the conversation had not
// reached them before it held untrusted content. Three rules, each a
// judgement of harm:
//
//   - A call that could send data out (CanLeak) is held once the
//     conversation holds private data and untrusted content: the lethal
//     trifecta, all three legs. Untrusted content alone cannot make it
//     leak anything of the user's.
//   - A call that acts outward (CanAct: pays, books, posts, messages,
//     invites) is held once the conversation holds untrusted content,
//     private data or not: the action is the harm, so two legs suffice.
//   - A call that could send data out (CanLeak) to a host named only by
//     untrusted content (far) is held once the conversation holds
//     untrusted content, private data or not: the visit itself is the
//     outward effect. The attacker who wrote the page or the message
//     learns that the agent obeyed, and the address (its path, its query,
//     its subdomain) can carry whatever the conversation holds. Hosts the
//     user or the instructions named, those config trusts, and those the
//     conversation reached before anything untrusted came in (same-site
//     navigation) are not held by this rule.
//
// When several hold, the refusal is the first's.
func Held(c Capabilities, name string, st TaintState, far []string) string {
	leak := CanLeak(c)
	if leak != "" && st.Taint.Private && st.Taint.Untrusted {
		return fmt.Sprintf("%s the conversation holds private data (%s) and untrusted content (%s); %s could send it out: %s.",
			RefusalPrefix, st.PrivateBy, st.UntrustedBy, name, leak)
	}
	if act := CanAct(c); act != "" && st.Taint.Untrusted {
		return fmt.Sprintf("%s the conversation holds untrusted content (%s); %s acts outward in the user's name, which that content may have asked for: an action needs no private data to do harm.",
			RefusalPrefix, st.UntrustedBy, name)
	}
	if leak != "" && st.Taint.Untrusted && len(far) > 0 {
		hosts, which := far[0], "a host"
		if len(far) > 1 {
			hosts, which = strings.Join(far, ", "), "hosts"
		}
		return fmt.Sprintf("%s the conversation holds untrusted content (%s); %s would reach %s, %s named only by untrusted content (a page, a message, a tool result), not by the user, the instructions or config, nor reached before that content came in: the visit itself is what such content may want (it tells its author the agent obeyed, and the address can carry data). To let it through, name the host in the prompt, add it to [trifecta] trusted_hosts in config.toml, or use --trifecta ask.",
			RefusalPrefix, st.UntrustedBy, name, hosts, which)
	}
	return ""
}

// Interlock wraps t so that a call the conversation tracked by tr holds
// back (see Held) is handled by policy: a call that could send data out
// (CanLeak) once the conversation is both private and untrusted (armed),
// a call that acts outward (CanAct) once it is untrusted, and a call that
// could send data out to a host only untrusted content named, once it is
// untrusted (the tracker keeps the trusted hosts). Under
// TrifectaRefuse it is not run, under TrifectaAsk it runs only if the
// asker says yes (a nil asker: nobody to ask, not run), under TrifectaOff
// it runs. An unknown policy refuses: the interlock fails closed.
//
// The conversation's state is the tracker's Judged state: with a front end
// that marks turns (Tracker.Turn), the state when the model made the call.
// The tool's capabilities are asked for at each call, for that call's
// input (CapabilitiesOf: an "agent" call handing its child no tool that
// reaches the network cannot leak), not when it is wrapped, so a tool
// whose reach depends on what is enforced at the time (a shell confined
// without the network) is judged by what it declares then. Outermost, the
// interlock asks once and hands that judgement down to the gate and the
// tracker beneath it. A call not run returns an error result starting with
// RefusalPrefix that says what made the conversation private, what made
// it untrusted, and why this tool could leak, for instance:
//
//	refused: lethal trifecta: the conversation holds private data (fs_read read the workspace) and untrusted content (web_fetch brought in content from outside); web_fetch could send it out: it reaches the network. The call was not run (--trifecta refuse).
//
// or, for an acting call, what made it untrusted:
//
//	refused: lethal trifecta: the conversation holds untrusted content (web_fetch brought in content from outside); mcp__bank__send_money acts outward in the user's name, which that content may have asked for: an action needs no private data to do harm. The call was not run (--trifecta refuse).
//
// or, for a call to a host only untrusted content named, which host:
//
//	refused: lethal trifecta: the conversation holds untrusted content (web_fetch brought in content from outside); web_fetch would reach evil.example, a host named only by untrusted content (a page, a message, a tool result), not by the user, the instructions or config, nor reached before that content came in: ... To let it through, name the host in the prompt, add it to [trifecta] trusted_hosts in config.toml, or use --trifecta ask. The call was not run (--trifecta refuse).
//
// It goes outside the permission gate and the tracker, so that a refused
// call is neither asked about nor counted; Policy.Wrap assembles that
// stack, and only there does the interlock ask the gate's question with
// its own (one question per call). Stacked by hand,
//
//	tl = Interlock(Gate(tracker.Wrap(tl), mode, asker), policy, tracker, asker)
//
// a call both ask about is asked about twice.
func Interlock(t Tool, policy Trifecta, tr *Tracker, asker Asker) Tool {
	return newInterlock(t, policy, tr, asker)
}

func newInterlock(t Tool, policy Trifecta, tr *Tracker, asker Asker) *interlocked {
	if policy == "" {
		policy = TrifectaRefuse
	}
	return &interlocked{inner: t, policy: policy, tr: tr, asker: asker}
}

type interlocked struct {
	inner  Tool
	policy Trifecta
	tr     *Tracker
	asker  Asker
	// gate, when set (Policy.Wrap), is inner: a gate asking the same
	// asker, whose question the interlock asks together with its own.
	gate *gated
}

func (l *interlocked) Spec() Spec                 { return l.inner.Spec() }
func (l *interlocked) Capabilities() Capabilities { return l.inner.Capabilities() }

// CapabilitiesOf forwards the wrapped tool's call capabilities.
func (l *interlocked) CapabilitiesOf(input json.RawMessage) (Capabilities, error) {
	return CapabilitiesOf(l.inner, input), nil
}

// Unwrap returns the tool the interlock wraps.
func (l *interlocked) Unwrap() Tool { return l.inner }

func (l *interlocked) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	return l.runCall(ctx, judge(l.inner, input))
}

func (l *interlocked) runCall(ctx context.Context, c *call) (Result, error) {
	if l.policy == TrifectaOff || CanLeak(c.caps) == "" && CanAct(c.caps) == "" {
		return runJudged(ctx, l.inner, c)
	}
	st := l.tr.Judged()
	var far []string
	if st.Taint.Untrusted && CanLeak(c.caps) != "" {
		far = l.tr.Untrusted(c.dests)
	}
	why := Held(c.caps, c.name, st, far)
	if why == "" {
		return runJudged(ctx, l.inner, c)
	}
	switch l.policy {
	case TrifectaRefuse:
		return refused(why + " The call was not run (--trifecta refuse)."), nil
	case TrifectaAsk:
		if l.asker == nil {
			return refused(why + " The call was not run: --trifecta ask, and no terminal to ask."), nil
		}
		req := Request{Tool: c.name, Input: c.input, Capabilities: c.caps, Reason: why}
		if l.gate != nil {
			switch l.gate.decide(c) {
			case verdictDeny:
				// Denied whatever the answer: nobody is asked.
				return runJudged(ctx, l.inner, c)
			case verdictAsk:
				req.Permission = permissionRequest(c).Permission
			}
		}
		ans, err := ask(ctx, l.asker, req)
		if err != nil {
			return Result{}, fmt.Errorf("tool: asking about the trifecta for %s: %w", c.name, err)
		}
		if !ans.Allow {
			return refused(withReason(why+" The call was not run: the user said no (--trifecta ask)", ans.Reason) + "."), nil
		}
		if req.Permission != "" {
			c.allowedBy = l.gate // the gate's question was this one
		}
		return runJudged(ctx, l.inner, c)
	}
	return refused(why + fmt.Sprintf(" The call was not run: unknown trifecta policy %q.", l.policy)), nil
}

func refused(msg string) Result { return Result{Content: msg, IsError: true} }
