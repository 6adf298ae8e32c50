// Package subagent is the built-in tool "agent": it runs a sub-task as a
// child run, an agent loop of its own with its own context, whose final
// answer is the parent call's result.
//
// The child is given a subset of the parent's tools (never more, and never
// "agent" itself: children do not start children), decorated the way the
// parent's are (redaction, taint tracking, the permission gate, the
// trifecta interlock) but tracked by a tracker of its own, which starts
// from the taint the parent's conversation had when it made the call: an
// armed parent cannot launder an exfiltration through a child. When the
// child ends its taint flows back into the parent's tracker. Each call's
// capabilities (tool.CallCapabilities) are the union of the tools that
// call gives the child, so the parent's gate, tracker and interlock treat
// a call giving only fs_read like a call of fs_read; the tool's own
// Capabilities, what an unreadable call is judged by, are the union of
// every tool it can hand out.
//
// Budgets are carved out of the parent's (agent.Ledger): a child can never
// be given more turns, output tokens or cost than the parent has left, and
// what it spent counts against the parent's budgets. The child's session
// is created with its first record, its meta naming the parent session
// and call (transcript.ParentCall), and its config record is a run's.
package subagent
