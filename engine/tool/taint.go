package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TaintOf returns the taint state of a conversation in which tools with the
// given capabilities actually ran: private once any of them read the
// workspace, untrusted once any of them may have brought in outside content
// or read a workspace that is not trusted.
// Pass the capabilities of calls that ran, not of tools that were merely
// offered or calls that were denied.
func TaintOf(caps ...Capabilities) transcript.Taint {
	var t transcript.Taint
	for _, c := range caps {
		t.Private = t.Private || c.ReadsWorkspace
		t.Untrusted = t.Untrusted || c.External || c.ReadsWorkspace && c.UntrustedWorkspace
	}
	return t
}

// TaintNames names a taint as "mecha tool call --taint" takes it:
// "private,untrusted", "private", "untrusted", or "clean".
func TaintNames(t transcript.Taint) string {
	var names []string
	if t.Private {
		names = append(names, "private")
	}
	if t.Untrusted {
		names = append(names, "untrusted")
	}
	if len(names) == 0 {
		return "clean"
	}
	return strings.Join(names, ",")
}

// ParseTaint parses TaintNames' words, separated by commas, in any order:
// private, untrusted, clean (nothing).
func ParseTaint(s string) (transcript.Taint, error) {
	var t transcript.Taint
	for _, w := range strings.Split(s, ",") {
		switch strings.TrimSpace(w) {
		case "private":
			t.Private = true
		case "untrusted":
			t.Untrusted = true
		case "clean":
		default:
			return transcript.Taint{}, fmt.Errorf("tool: unknown taint %q (want private, untrusted or both, comma separated, or clean)", w)
		}
	}
	return t, nil
}

// Tracker accumulates the taint of the calls that actually ran, and what
// made it so. Each tool is wrapped inside the permission gate, so that
// denied calls are not counted (Policy.Wrap puts it there):
//
//	tl = Gate(tracker.Wrap(tl), mode, asker)
//
// A call counts once Run was entered, whatever its result: a failing
// command may still have printed private or outside data. Counting at
// entry, not at the end, errs towards more taint: a call made in the same
// answer as a slower one is judged with the slower one counted. A Tracker
// is safe for concurrent use; its zero value is clean.
type Tracker struct {
	mu sync.Mutex
	st TaintState
	// turn is the state when the calls now running were made (see Turn);
	// nil until Turn is first called.
	turn *TaintState
	// privateTool and untrustedTool name the tool whose call, counted at
	// entry, gave st's reasons ("" when something else did); see Absorb.
	privateTool, untrustedTool string
	// trusted is the hosts whose provenance is trusted (see TrustHosts).
	trusted hostSet
}

// TrustHosts adds hosts whose provenance is trusted: a call that reaches
// the network may reach them once the conversation holds untrusted content
// (see Held). A host is a name ("example.com"; "www." and case do not
// matter) or "*.domain" for the domain's subdomains (config's
// trusted_hosts).
func (tr *Tracker) TrustHosts(hosts ...string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, h := range hosts {
		tr.trusted.add(h)
	}
}

// TrustText adds the hosts trusted text names (HostsInText): the user's
// prompts, the system prompt. Only their names are trusted, not their
// subdomains.
func (tr *Tracker) TrustText(texts ...string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, t := range texts {
		for _, h := range HostsInText(t) {
			tr.trusted.add(h)
		}
	}
}

// TrustedHosts lists the hosts trusted so far, names then "*.domain"s:
// those given (TrustHosts, TrustText) and those the conversation reached
// before it held untrusted content. A subagent's child starts from its
// parent's.
func (tr *Tracker) TrustedHosts() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.trusted.list()
}

// Untrusted returns the hosts of dests (normalised, see NormalizeHost)
// whose provenance is not trusted: no trusted text named them, config does
// not list them, and the conversation had not reached them before it held
// untrusted content.
func (tr *Tracker) Untrusted(dests []string) []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var out []string
	for _, h := range dests {
		if !tr.trusted.has(h) {
			out = append(out, h)
		}
	}
	return out
}

// Turn marks the start of a batch of calls made together (the calls of one
// model answer): until the next Turn, Judged returns the state as it is
// now. Calls made together were chosen before any of their results were
// seen, so none of them can carry what a sibling brought in; judging them
// by the state at the batch's start makes the interlock's decisions
// independent of the order in which parallel calls happen to start.
func (tr *Tracker) Turn() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	st := tr.st
	tr.turn = &st
}

// Judged is the state the interlock judges a call by: the state at the
// last Turn, or, if Turn was never called (a front end that hands each
// result back as soon as it returns), the state now.
func (tr *Tracker) Judged() TaintState {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.turn != nil {
		return *tr.turn
	}
	return tr.st
}

// TaintState is a taint and what made it so.
type TaintState struct {
	Taint transcript.Taint
	// PrivateBy and UntrustedBy say what first made the conversation
	// private and untrusted ("fs_read read the workspace"); empty while it
	// is not.
	PrivateBy, UntrustedBy string
}

// Start merges the taint a run starts from (a resumed session's) into the
// tracker; why says where it came from ("an earlier run of this session").
func (tr *Tracker) Start(t transcript.Taint, why string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.merge(t, why, why)
	if tr.turn != nil {
		tr.turn.Taint = tr.turn.Taint.Merge(t)
		if tr.turn.PrivateBy == "" {
			tr.turn.PrivateBy = tr.st.PrivateBy
		}
		if tr.turn.UntrustedBy == "" {
			tr.turn.UntrustedBy = tr.st.UntrustedBy
		}
	}
}

// Absorb merges taint that reached the conversation by another route (a
// subagent's child run, whose results the conversation now holds) into the
// state, saying what brought it in. Unlike Start it leaves the judged state
// of the calls now running alone: calls made together are still judged by
// what the model had seen when it made them.
//
// refines names the tool whose call brought this taint in ("agent"): a
// reason that tool's call gave when it was entered (the tracker counts a
// call at entry, by what it could do) is replaced by the absorbed one, which
// says where the taint actually came from (the child's hostile page). The
// taint itself only grows.
func (tr *Tracker) Absorb(t transcript.Taint, privateBy, untrustedBy, refines string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if refines != "" && t.Private && tr.privateTool == refines {
		tr.st.PrivateBy, tr.privateTool = privateBy, ""
	}
	if refines != "" && t.Untrusted && tr.untrustedTool == refines {
		tr.st.UntrustedBy, tr.untrustedTool = untrustedBy, ""
	}
	tr.merge(t, privateBy, untrustedBy)
}

// Wrap returns t, recording the capabilities of each call that runs
// (CapabilitiesOf: what this call's input can do, as judged by the
// outermost decorator of this package above it, or by Wrap's tool itself
// when there is none).
func (tr *Tracker) Wrap(t Tool) Tool { return &tracked{Tool: t, tr: tr} }

// Taint returns the taint of the calls that ran so far.
func (tr *Tracker) Taint() transcript.Taint { return tr.State().Taint }

// State returns the taint so far and what made it so.
func (tr *Tracker) State() TaintState {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.st
}

func (tr *Tracker) add(name string, c Capabilities) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	t := TaintOf(c)
	if t.Private && !tr.st.Taint.Private {
		tr.privateTool = name
	}
	if t.Untrusted && !tr.st.Taint.Untrusted {
		tr.untrustedTool = name
	}
	untrustedBy := name + " brought in content from outside"
	if !c.External && c.UntrustedWorkspace {
		untrustedBy = name + " read a workspace that is not trusted (mecha trust trusts it)"
	}
	tr.merge(t, name+" read the workspace", untrustedBy)
}

// Reached counts a call of t with input that was answered without running
// (a replay gives back the recorded result) as the tracker would have
// counted it running: if it reaches the network and the conversation, as
// judged (Judged), holds no untrusted content, its destinations are
// trusted from then on. Its taint is not added: whoever answers it brings
// in the recorded taint (Absorb).
func (tr *Tracker) Reached(t Tool, input json.RawMessage) {
	c := judge(t, input)
	tr.reach(c)
}

// reach notes the destinations of a call that runs while the conversation,
// as the model had it when it made the call (Judged), holds no untrusted
// content: what the user and the model chose before any outside content
// could steer them is trusted from then on (same-site navigation).
func (tr *Tracker) reach(c *call) {
	if len(c.dests) == 0 {
		return
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	st := tr.st
	if tr.turn != nil {
		st = *tr.turn
	}
	if st.Taint.Untrusted {
		return
	}
	for _, h := range c.dests {
		tr.trusted.add(h)
	}
}

func (tr *Tracker) merge(t transcript.Taint, privateBy, untrustedBy string) {
	if t.Private && !tr.st.Taint.Private {
		tr.st.PrivateBy = privateBy
	}
	if t.Untrusted && !tr.st.Taint.Untrusted {
		tr.st.UntrustedBy = untrustedBy
	}
	tr.st.Taint = tr.st.Taint.Merge(t)
}

type tracked struct {
	Tool
	tr *Tracker
}

// Unwrap returns the tool the tracker wraps.
func (t *tracked) Unwrap() Tool { return t.Tool }

// CapabilitiesOf forwards the wrapped tool's call capabilities.
func (t *tracked) CapabilitiesOf(input json.RawMessage) (Capabilities, error) {
	return CapabilitiesOf(t.Tool, input), nil
}

func (t *tracked) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	return t.runCall(ctx, judge(t.Tool, input))
}

func (t *tracked) runCall(ctx context.Context, c *call) (Result, error) {
	t.tr.reach(c)
	t.tr.add(c.name, c.caps)
	return runJudged(ctx, t.Tool, c)
}
