// Package toolreplay is tool replay, the dual of model replay: it holds a
// session's tool calls fixed, with no model and no agent loop, and runs
// them again.
//
// # The calls of a session
//
// Extract reads a session once, through sessionview (the one place calls
// are paired with their results), into Calls: every tool call in the order
// it was made (parallel calls in call order) with its exact arguments and
// recorded result. A call that was denied or refused never ran: it is kept,
// marked Skip, and appears in a script as a comment. What the record lost
// is a Gap: a call whose result never came (the process was killed while it
// ran, or a resume answered it "outcome unknown"; such a call is redone and
// allowed to do anything), arguments that are not a JSON object (not
// redone), a torn or unparseable line (whatever it held is lost; the gap
// stands where the line was). Source is SourceTranscript when nothing was
// lost and SourceReconstructed otherwise.
//
// # Scripts
//
// WriteScript writes the calls as a POSIX sh script: a header of comments
// (generator and version, session id and title, created time, workspace,
// how many calls, the source, what the calls may do, and a "# LOSSY:" line
// when anything was lost), then one "call" per redone call, each through
// "mecha tool call --yes -w WS -- NAME -" with its input on standard input
// from a here-document with a quoted delimiter that no line of the input
// equals, so the input arrives byte for byte and nothing in it is
// expanded. Everything recorded that reaches a comment goes through
// Comment (one line, no control characters); everything that reaches a
// command line goes through Quote. The workspace is the script's first
// argument, defaulting to the recorded one. A call that succeeded in the
// recording and fails now stops the script, naming it.
//
// # Reruns
//
// Rerun redoes the calls in order against today's tools and compares each
// new result with the recorded one: StatusSame, StatusChanged,
// StatusNowFails, StatusNowSucceeds; StatusSkipped for a call not redone
// or refused by the gate now (never counted as the same); StatusUnrecorded
// when there is no recorded result to compare with. Ignore expressions mask
// volatile text in both results first; Diff is a unified diff of the
// masked texts.
//
// Invoke runs one call as the agent loop would. toolreplay never reaches a
// model: it imports neither agent nor a provider (an import rule).
package toolreplay
