// Package toolreplay is tool replay, the dual of model replay: it holds a
// session's tool calls fixed, with no model and no agent loop, and runs
// them again.
//
// # The calls of a session
//
// Extract reads a session once, through sessionview (the one place calls
// are paired with their results), into Calls: every tool call in the order
// it was made (parallel calls in call order) with its exact arguments and
// recorded result. A call the permission gate denied or the trifecta
// interlock refused never ran: it is kept, marked Skip with a Note saying
// which (DeniedInRecording, InterlockedInRecording), and is never redone:
// a script has it as a comment, a rerun reports it skipped for that
// reason. Nothing of it was lost, so it is no gap. What the record lost
// is a Gap: a call whose result never came (the process was killed while it
// ran, or a resume answered it "outcome unknown"; such a call is redone and
// allowed to do anything), arguments that are not a JSON object (not
// redone), a torn or unparseable line (whatever it held is lost; the gap
// stands where the line was), a server's summary saying its recording
// stopped (it went on answering calls the record does not hold; the gap
// stands after the last call recorded). Source is SourceTranscript when nothing was
// lost and SourceReconstructed otherwise.
//
// # MCP calls
//
// Each call of an MCP tool carries its Server: the server the session's
// config record names for it (mcp_servers of a run, keyed by the offered
// tool names), or the upstream of a proxy session, whose tool_call records
// name the upstream's own tools: those calls are renamed
// mcp__<name>__<tool> (name UpstreamName when the proxy had none), the
// name under which mecha's client offers them. Scripts and reruns start
// that server as recorded (ServerConfig), never the user's configured one;
// no environment or header value was recorded, so none is given.
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
// expanded. Each call passes --taint with its Taint (none when clean), so
// mecha tool call's interlock judges it as the run's would have: in an
// armed conversation, a call that could send data out is refused and the
// script stops there, whatever the recording's policy was; a comment
// marks such calls (by ScriptOptions.Caps, an MCP tool declaring every
// capability). A call that could send data out after untrusted content
// also passes --trust-host for each host the run trusted then (its
// TrustedHosts, and the hosts of the calls that could send data out made
// before untrusted content), so a call to a host only untrusted content
// named is refused too. Everything recorded that reaches a comment goes through
// Comment (one line, no control characters); everything that reaches a
// command line goes through Quote. The workspace is the script's first
// argument, defaulting to the recorded one. A call that succeeded in the
// recording and fails now stops the script, naming it. An MCP call adds
// --mcp-name, --mcp-command and one --mcp-arg per argument (or --mcp-url),
// each value quoted on its own, and the header lists the servers.
//
// # Reruns
//
// Rerun redoes the calls in order against today's tools and compares each
// new result with the recorded one: StatusSame, StatusChanged,
// StatusNowFails, StatusNowSucceeds; StatusSkipped for a call not redone
// (its Note the reason) or refused by the gate or the interlock now (never
// counted as the same); StatusUnrecorded
// when there is no recorded result to compare with. Ignore expressions mask
// volatile text in both results first; Diff is a unified diff of the
// masked texts.
//
// Invoke runs one call as the agent loop would. toolreplay never reaches a
// model: it imports neither agent nor a provider (an import rule).
package toolreplay
