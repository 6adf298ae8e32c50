// Package tool defines the Tool interface, the capability declarations the
// permission gate and taint tracking read, and the ordered registry of the
// tools a run offers. The built-in tools live in tool/builtin.
//
// # Registry
//
// A Registry keeps tools in registration order, which is the order the
// model is shown them in. Restrict narrows it to a named subset (keeping
// the registry's order) and fails with ErrUnknownTool, naming the unknown
// and the available tools, when a name is not registered.
//
// # Call capabilities
//
// A tool whose reach depends on its input (the subagent tool, which can do
// only what the tools a call gives its child can do) also implements
// CallCapabilities. CapabilitiesOf(t, input) is what the gate, the tracker
// and the interlock judge a call by: the tool's answer for that input, or
// its Capabilities when it has none or cannot judge the input. Every
// decorator here forwards it, so the decorated stack still exposes it.
//
// A call is judged once. The outermost of this package's decorators asks
// for the call's capabilities when the call is made and hands that
// judgement down to the decorators of this package beneath it, which read
// it instead of asking again (a decorator of another package in between
// hands down only the input, and the next one beneath it judges anew).
//
// # Permission
//
// Gate decorates a Tool with the run's permission Mode. A tool that can
// neither modify the workspace, run commands, reach the network nor act
// outward (see NeedsPermission) runs without asking in every mode. Other calls run in
// ModeYes, are refused in ModeReadOnly, and in ModeAsk (the default) run
// only when the Asker says yes; with no Asker (no terminal) they are
// denied. A call that is not run returns a Result with IsError set and a
// message starting with "denied", which the model reads like any other
// tool failure:
//
//	denied: fs_write modifies the workspace and the run is in read-only mode
//	denied by the user
//	denied: no terminal to ask for permission (use --yes to allow, or --read-only)
//
// TerminalAsker is the Asker of an interactive run: it prompts on a writer
// and reads a y/N answer from a reader. Whether a terminal exists is for
// the caller to decide.
//
// # Policy
//
// A run's tools are wrapped by Policy.Wrap, the one place the trifecta
// interlock (Interlock), the permission gate, the taint tracker and the
// redaction of secrets (Redact) are assembled, from the tool outwards:
//
//	Interlock(Gate(tracker.Wrap(Redact(t))))
//
// The interlock holds back a call that could send data out once the
// conversation holds private data and untrusted content (the lethal
// trifecta), and a call that acts outward in the user's name (pays,
// posts, invites: ActsOutward) once it holds untrusted content, since such
// an action does harm with no private data, and a call that could send data
// out to a host only untrusted content named once it holds untrusted
// content, since the visit is itself the effect (see Held). A call's hosts
// are DestinationsOf: a tool's own answer (CallDestinations: web_fetch's
// URL), else every host its string arguments name (HostsIn); the Tracker
// keeps the trusted ones: TrustText (the prompts, the system prompt),
// TrustHosts (config's trusted_hosts), and the hosts of calls made before
// the conversation held untrusted content.
//
// A call the interlock refuses is neither asked about nor counted, one the
// gate denies is not counted. The interlock judges the call's capabilities
// once and hands them down. The person is asked at most once per call:
// where the interlock and the gate would both ask, one question carries
// both reasons (Request.Reason and Request.Permission).
//
// # Taint
//
// TaintOf turns the capabilities of the tools that ran into a
// transcript.Taint: private once a tool that reads the workspace ran,
// untrusted once a tool whose results may come from outside ran. A Tracker
// does the same as calls happen: each tool is wrapped with Tracker.Wrap
// inside the gate, and denied calls do not count.
package tool
