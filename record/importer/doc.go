// Package importer converts the transcripts of other agent harnesses into
// mecha sessions ("mecha import"): Claude Code's project transcripts
// (~/.claude/projects/<dir>/<session>.jsonl) and Codex's rollouts
// (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl).
//
// # What a session gets
//
// A header whose imported_from names the harness and the source path (and
// the calls mapped only approximately), one config record holding what the
// source knew (provider, model, workspace, the names of the tools called)
// and null for everything else, the conversation as message records with
// each tool call paired with its result, a taint checkpoint with both
// flags set (what another harness read and fetched has unknown provenance,
// so the conversation is armed), and a summary holding the usage where the
// source recorded any.
//
// # Claude Code
//
// A Claude Code file is a tree of entries linked by uuid and parentUuid: a
// rewind (editing an earlier prompt) starts a new branch and leaves the
// abandoned one in the file. The conversation imported is the branch it
// last took, found from its last entry (not a lagging tool result) up to
// its root, with what hangs off that branch without a prompt between:
// Claude Code writes the result of a parallel call as the child of that
// call's own entry, off the chain, and from 2.1.32 threads parallel calls
// through progress lines. A compaction boundary (parentUuid null) goes on
// through its logicalParentUuid; when that entry is not in the file, from
// the last entry before the boundary. The entries are taken in the order
// they were written. One model response is written as one entry per
// content block, the entries sharing the API message id, sometimes with a
// tool result written between two of them; those are rejoined into one
// assistant message, and the results that answer it into the one user
// message after it, in the order of the calls. Usage is counted once per
// response. A compaction boundary and its summary (isCompactSummary)
// become a compaction record. Entries Claude Code wrote itself (isMeta),
// slash-command wrappers and local commands' output are not prompts;
// progress lines, snapshots, titles and queue operations are bookkeeping.
// Tools map as Read→fs_read, Write→fs_write, Edit→fs_edit, Bash→shell
// (exactly: same meaning, arguments renamed), and Glob and Grep→shell as
// a find or grep command line (approximately: the output differs); every
// other tool keeps its name, which a replay refuses to replay, naming it.
//
// # Sub-agents
//
// A Task (or Agent) call starts a sub-agent, whose conversation Claude
// Code writes as sidechain entries (isSidechain): into the session's own
// file (before 2.0), into agent-<agentId>.jsonl beside it naming its
// sessionId (2.0), or into <session>/subagents/agent-<agentId>.jsonl
// (2.1). Each is parsed on its own and joined to the call that started it:
// the call whose result (toolUseResult.agentId, the entry's agentId, or
// "agentId: ..." in its text) or progress line names its agent id, or else
// the first call whose prompt is its first prompt. A joined one becomes a
// child session naming the parent session and call (transcript.ParentCall),
// as mecha's own subagents' runs do, so "sessions show" links it and
// "replay --deep" replays it; the calls map onto mecha's agent tool, its
// task the prompt (approximately: the agent type has no counterpart).
// Sidechain entries of the file that join no call are counted as
// sidechain; files that join none (a compaction's run,
// agent-acompact-*.jsonl) are named in the result and not imported. A
// sub-agent's file imported on its own is its conversation.
//
// # Codex
//
// A Codex rollout is a flat stream of {timestamp, type, payload} lines:
// session_meta (id, cwd, cli version), turn_context (model, cwd, effort),
// response_item (message, reasoning, function_call with its arguments as a
// JSON string, function_call_output, custom_tool_call and its output),
// event_msg (token counts, and echoes of the messages) and compacted.
// Consecutive model items become one assistant message and the outputs
// after them one user message. The user-role items Codex writes itself
// (environment context, user and AGENTS.md instructions, a shell command
// the user ran) and developer messages are not prompts. A compacted item
// becomes a compaction record (its message, or the text of its
// replacement history). shell (argv, "bash -lc CMD" unwrapped) and
// exec_command map to shell, approximately when the argv or the working
// directory has to be rewritten into one command line; apply_patch keeps
// its name, approximately (mecha has no such tool). Usage is the last
// token count's total.
//
// # Nothing lost silently, tolerance and idempotence
//
// Both formats change between versions. Lines are parsed one by one, and
// every one is either imported or counted under a reason
// (transcript.Skip*: a line that is not JSON, of a type not known or of a
// known type in a shape not understood is "not understood"), never
// failing the import; the counts are in the session's imported_from.
// The importer's tests check, for each fixture, that the prompts,
// responses, calls and results the source holds are those imported plus
// those counted as skipped. A session's id is derived from its first
// timestamp and a hash of the harness, the source's absolute path and its
// content, so importing the same file twice finds the first import
// instead of making a second (a file that has grown since is a new
// import).
package importer
