// Package sessionview is what a session shows: its header, the
// configuration of each attach and what changed between attaches, the
// turns, every tool call paired with its result, denials and refusals,
// compactions, taint coverage per message, and usage and cost per run. It
// is the one place where calls are paired with results; replay's
// extraction and "mecha sessions show" both read sessions through it.
//
// # Streaming
//
// A view is built in one front-to-back read of the file (session.Scan)
// and handed out as Items in file order while it is read, so that a
// transcript of hundreds of megabytes is never held in memory. What only
// the end of the file knows (merged taint, whether the last messages are
// covered, usage, cost, skipped lines) comes back as Totals after the last
// item.
//
// Pairing needs a little lookahead: a call is answered by the first result
// with its id written after it and before the model's next message (the
// harness records the results of parallel calls together, in no promised
// order). A Reply whose calls are not all answered is held back, with the
// items after it, until they are or the model's next message is read; so
// at most one exchange is ever held. A result that answers no waiting call
// is an orphan of the User message it is in.
//
// Taint follows session.TaintTimeline: the checkpoint covering a message
// is the first written after it, merged with every earlier one. Each
// Checkpoint item names the messages it covers; messages after the last
// checkpoint are counted in Totals.Uncovered, and their provenance is
// unknown, never clean.
//
// Usage and cost come from summary records, each attributed to the
// provider and model it names (the session's for older summaries) and
// priced at today's pricing.Table.
//
// # Renderers
//
// WriteText and WriteJSON write what "mecha sessions show" and "show
// --json" print, and WriteMarkdown what "mecha sessions export" writes as
// Markdown, to an io.Writer, as they read. The HTML page is in the
// subpackage html. Build holds a whole View
// for callers that want to look back; Walk runs the same view over a
// session already loaded.
//
// sessionview imports session, transcript and pricing; never replay,
// agent, provider or net/http (a test checks).
package sessionview
