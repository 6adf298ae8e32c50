// Package inspectlog writes mecha's sessions as an eval log of the UK AISI's
// Inspect (inspect_ai), so that Inspect's log viewer ("inspect view") and
// the tools that read its logs (Docent) open them.
//
// The log is Inspect's JSON format, version 2: one JSON object with the
// eval's identity (eval), its plan, results and stats, and its samples.
// Inspect's reader (inspect_ai.log.read_eval_log) takes a file of this
// format by its ".json" extension; the tests read every log this package
// writes back with it.
//
// A session is a sample (FromSession): its id the session's, its input
// the first prompt, its messages the system prompt and the conversation
// (an assistant message's text, thinking as reasoning, and tool calls;
// each tool result a tool message, an error result with its error), its
// output the last answer and the stop reason, its model usage per
// provider/model from the run summaries, its times from the records', and
// its metadata mecha's own: the session's id, title, provider, workspace,
// what it is (a replay, an import, a subagent's child and its parent
// call), and its taint (merged over every checkpoint).
//
// The package writes; it never reads a log, and it runs nothing.
package inspectlog
