// Package transcript defines mecha's on-disk session format and encodes and
// decodes one line of it. It is the vocabulary every other package speaks and
// imports nothing outside the standard library.
//
// # Files
//
// A session is one file named <id>.jsonl. Its first line is a header (a meta
// record); every following line is one record. Each line is a single JSON
// object terminated by "\n" and containing no other newline. Files are only
// ever appended to, so a process that dies leaves every record it finished
// writing intact; at worst the last line is cut short, and readers skip a
// line they cannot parse rather than giving up on the file.
//
// # Limits
//
// A session file is a regular file; readers open nothing else (a FIFO or a
// device named <id>.jsonl is passed over with a note). The header line is
// at most 64 KiB (MaxHeader) without its newline: a file whose first line
// is longer is not a session, and readers stop reading it there. Every
// other line is at most 64 MiB (MaxLine): a longer line is oversized,
// read past without being held, skipped and reported like a line that
// does not parse. Writers never write what readers refuse: the header's
// text fields are clipped when a session is created (title to 1,024
// characters, workspace to 4,096, provider, model and replay_of to 256,
// each marked with "…"), which keeps it far below 64 KiB even with every
// character escaped, and a record longer than 64 MiB is refused and stops
// the recording (mecha's own tools cap their results at 64 KiB).
//
// The file name is the id: a header whose id differs from its file's
// name is read, listed and resumed under the file's name, with a note.
//
// Every record has a "record" field naming its kind. Writers put it first
// (readers use that to classify a line without parsing it, and fall back to
// a full parse when it is not first). Any record may carry "at", the time it
// was written in RFC 3339 UTC. Records may carry fields this description
// does not name, and readers ignore fields they do not know. A record of a
// kind a reader does not know is kept as it is and otherwise ignored.
//
// # Records
//
// meta, the header, always and only the first line. format is the format
// version (1); id is the session id; workspace is an absolute path; title is
// a short human label. A session that replays another names it in replay_of;
// one that reruns another's tool calls with no model ("mecha rerun") names
// it in rerun_of, and holds a config record and one tool_call record per
// call it redid.
// A session recorded by "mecha mcp serve" or "mecha mcp proxy" names the
// client it served in mcp_client (name and version from its initialize,
// and the protocol version negotiated with it); other sessions have none.
// A session converted from another harness's transcript by "mecha import"
// names its source in imported_from: harness ("claude-code" or "codex"),
// path (the source file's absolute path, clipped to 4,096 characters), and
// approximate, the ids of at most 256 tool_use blocks whose mapping onto
// mecha's tools only approximates what the source ran (with
// approximate_more counting any past those), which makes a script or
// rerun of them lossy; entries, the number of the source's entries (its
// non-empty lines), and skipped, the entries not imported counted by
// reason, so nothing is lost without a count: off_branch (on a branch a
// rewind left, or linked to nothing), sidechain (a sub-agent's, not joined
// to its call), not_understood (not JSON, a type not known, a shape not
// understood), server_tool (a call the model's server ran), duplicate (a
// block written twice), injected (context the harness put in the user's
// turn: Claude Code's isMeta entries, Codex's environment, instructions
// and developer messages), command (slash-command wrappers and local
// command output), reasoning (Codex's hidden reasoning) and bookkeeping
// (lines that carry no conversation: progress, snapshots, titles, echoed
// events). Both are absent in sessions imported before they were
// recorded, skipped also when nothing was skipped; a reader keeps a
// reason it does not know. Its config record holds what the source knew
// and null for the rest; its content has unknown provenance, so a taint
// checkpoint with both flags set follows its messages. Where the source
// compacted its context, a compaction record stands (with the source's
// summary, and no usage: the source did not record what it cost).
// A reflection ("mecha reflect") names the session it read in reflects_on;
// a session that distilled reflections into rules has distill set to true;
// a subagent's child run names its parent in parent: session (the parent
// session's id) and call_id (the id of the parent's tool_use it answers).
// A session a rewind forked ("mecha rewind", the chat's /rewind) names
// where it came from in fork_of: session (the id of the session rewound)
// and turn (the prompt it went back to before, 1-based); it holds the
// records of that session before that prompt, copied, and then its own.
//
//	{"record":"meta","format":1,"id":"20260805T101500-9c8d7e6f","created_at":"2026-08-05T10:15:00Z","provider":"anthropic","model":"claude-opus-5","workspace":"/home/you/project","title":"summarize what changed","fork_of":{"session":"20260805T091500-3f2a1b7c","turn":2}}
//
//	{"record":"meta","format":1,"id":"20250710T100000-5be1c2d3","created_at":"2025-07-10T10:00:00Z","provider":"anthropic","model":"claude-sonnet-4-20250514","workspace":"/home/you/project","title":"fix the failing test","imported_from":{"harness":"claude-code","path":"/home/you/.claude/projects/-home-you-project/0b6c….jsonl","approximate":["toolu_03"],"entries":1906,"skipped":{"bookkeeping":1412,"injected":3,"off_branch":12}}}
//
//	{"record":"meta","format":1,"id":"20260805T091500-3f2a1b7c","created_at":"2026-08-05T09:15:00Z","provider":"anthropic","model":"claude-opus-5","workspace":"/home/you/project","title":"summarize what changed"}
//
// config, the run configuration, written once each time a process attaches
// to the session to run in it (at creation and at every resume). It holds
// everything that shapes a request or constrains the run, so that a later
// reader can tell whether two runs are comparable and a replay can rebuild
// the request. system_prompt is the resolved text, not a path; tools lists
// tool names in registry order. Optional settings that were not pinned are
// null: a null temperature or seed means the server chose. trifecta is the
// policy of the private-data/untrusted-content/exfiltration interlock, and
// sandbox and sandbox_network say how the shell tool was confined, as far
// as the kernel enforced it ("landlock" or "none"; sandbox_network false
// only when the shell's network was actually cut). mecha run writes
// "refuse" (or "ask", "off" when asked), and "landlock" with false where the
// kernel allows it; builds before the interlock and the sandbox wrote
// "off", "none" and true, and readers must accept other values. Under
// "landlock", sandbox_namespaces (omitted when false) says the shell also
// ran in its own user, mount, PID and IPC namespaces (false: Landlock and
// seccomp alone, where the kernel refused them), sandbox_read_deny
// (omitted when empty) lists the paths it could not read,
// sandbox_allow_domains the hosts it could reach through mecha's egress
// proxy with the network otherwise cut, and sandbox_send_domains those of
// them marked as able to receive data. trusted_hosts (omitted when empty)
// are config.toml's [trifecta] trusted_hosts for the attach: hosts (or
// "*.domain" for a domain's subdomains) the interlock let a call that
// reaches the network reach once the conversation held untrusted content,
// though no prompt named them.
//
// workspace_trust is whether the workspace was trusted for the attach:
// {"trusted":false,"by":"default"} when no entry of config.toml's
// trusted_workspaces covers it (what the file tools and the shell read
// there then counted as untrusted as well as private, and AGENTS.md or
// CLAUDE.md was left out of the system prompt); {"trusted":true,
// "by":"config","entry":"/home/you"} when an entry (the workspace or a
// parent) does; "by":"question" when the chat's question was answered
// (trust, which also wrote the entry; or not now); "by":"recorded" when a
// resume or replay found the session recorded untrusted and kept it so
// (taint only grows: trusting a workspace later does not make an earlier
// untrusted session trusted). A resume or replay is trusted only when the
// record was and the workspace is now. A config record without the field
// (every build before it) is judged as a new run in its workspace is
// judged today: trusted only if trusted_workspaces covers it now, since
// what the older run decided is unknown and unknown is never trusted.
//
//	{"record":"config","mecha_version":"0.1.0","provider":"local","model":"qwen3","workspace":"/w","system_prompt":"You are ...","tools":["fs_read","fs_list"],"effort":null,"temperature":0,"seed":42,"thinking":false,"cache_prompt":true,"max_tokens":4096,"max_turns":20,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":6,"permission_mode":"ask","trifecta":"refuse","sandbox":"landlock","sandbox_network":false,"tool_specs":[{"name":"fs_read","description":"Read a text file in the workspace.","input_schema":{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}},{"name":"fs_list","description":"List a directory of the workspace.","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]}
//
// A setting the attach's provider does not take is null too, whatever was
// asked, so that the record holds only what shaped the request: the
// Anthropic API takes no seed, and no effort without thinking; the Chat
// Completions wire has no thinking switch, and of its servers only
// llama-server (provider "local") takes cache_prompt. mecha run says so
// once on stderr when such a setting was asked for. Below, an OpenAI
// attach: effort and seed sent, thinking and cache_prompt not.
//
//	{"record":"config","mecha_version":"0.3.0","provider":"openai","model":"gpt-5","workspace":"/w","system_prompt":"You are ...","tools":["fs_read"],"effort":"high","temperature":null,"seed":7,"thinking":null,"cache_prompt":null,"max_tokens":4096,"max_turns":20,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":6,"permission_mode":"ask","trifecta":"refuse","sandbox":"landlock","sandbox_network":false}
//
// permission_rules, optional, are the saved permission rules the attach's
// permission gate applied, each with its effect and the file it came from
// (config.toml, $MECHA_HOME/permissions.toml, the workspace's
// .mecha/permissions.toml): what a replay or a reader needs to know why a
// call ran unasked or was denied. Absent when there were none, and in
// records written before rules existed.
//
//	"permission_rules":[{"rule":"shell(go test ./...)","effect":"allow","source":"config.toml"},{"rule":"fs_read(**/.env)","effect":"deny","source":".mecha/permissions.toml"}]
//
// tool_specs, optional, is what the model was told about each tool it was
// offered, in registry order (the order of tools): the name, the
// description and the JSON Schema of the input, as sent. A replay compares
// them with today's to note which specs changed since the recording.
// Writers put it last, being by far the longest field. It is absent from
// transcripts written before it existed (the specs are then unknown) and
// [] when no tool was offered.
//
// mcp_servers, optional, lists the MCP servers whose tools were offered, in
// configuration order: name (mecha's name for it), transport ("stdio" or
// "http"), command and args or url as configured, with ${VAR} references
// left unexpanded (header and environment values are never recorded), the
// server_name and server_version the server answered initialize with, the
// protocol_version negotiated, tools, the names the model was offered
// for its tools (mcp__<server>__<tool>), and tool_capabilities, what each
// offered tool declared (the capability names reads_workspace,
// modifies_workspace, runs_commands, reaches_network, acts_outward (since
// the interlock's second rule; a list of the other five, every one,
// written before it, meant every capability) and external, by the
// server's own name for the tool; [] for a tool that declared none): what
// the interlock, the gate and the taint tracker judged its calls by, after
// config.toml's capabilities, tool_capabilities and trust_annotations. A
// replay uses mcp_servers to name the server of a recorded tool that is
// gone and to note a server whose version changed; a rerun starts the
// recorded servers with their tools declaring what was recorded. It is
// absent when no MCP server was connected, and from transcripts written
// before it existed; tool_capabilities is absent from transcripts written
// before it existed (a rerun then takes every capability as declared).
//
//	{"record":"config","mecha_version":"0.2.0","provider":"local","model":"qwen3","workspace":"/w","system_prompt":"You are ...","tools":["fs_read","mcp__everything__echo"],"effort":null,"temperature":null,"seed":null,"thinking":false,"cache_prompt":true,"max_tokens":4096,"max_turns":20,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":6,"permission_mode":"ask","trifecta":"off","sandbox":"none","sandbox_network":true,"mcp_servers":[{"name":"everything","transport":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-everything"],"server_name":"mcp-servers/everything","server_version":"2.0.0","protocol_version":"2025-11-25","tools":["mcp__everything__echo"],"tool_capabilities":{"echo":["reads_workspace","external"]}}],"tool_specs":[{"name":"fs_read","description":"Read a text file in the workspace.","input_schema":{"type":"object"}},{"name":"mcp__everything__echo","description":"Echoes back the input","input_schema":{"type":"object","properties":{"message":{"type":"string"}}}}]}
//
// mcp_upstream, only in the config of a session recorded by "mecha mcp
// proxy", is the server the proxy forwarded to: the name it was given (if
// any), transport "stdio" with the
// command and args that started it, or "http" with its url (never
// environment or header values), and server, its serverInfo name and
// version with the protocol version negotiated with it (results carry
// per-version _meta, so the version belongs with the identity). A proxy or
// server session's provider is "mcp" and its model empty: no model ran.
//
//	{"record":"config","mecha_version":"0.1.0","provider":"mcp","model":"","workspace":"/w","system_prompt":null,"tools":[],"effort":null,"temperature":null,"seed":null,"thinking":false,"cache_prompt":false,"max_tokens":0,"max_turns":0,"max_output_tokens":null,"max_cost_usd":null,"compact_at_tokens":null,"compact_keep_recent":0,"permission_mode":"yes","trifecta":"off","sandbox":"none","sandbox_network":true,"mcp_upstream":{"name":"everything","transport":"stdio","command":"npx","args":["-y","@modelcontextprotocol/server-everything"],"server":{"name":"mcp-servers/everything","version":"2.0.0","protocol_version":"2025-11-25"}}}
//
// message, one conversation message. role is "user" or "assistant" as
// mecha writes it; readers keep a message of any other role (a transcript
// from another tool may carry "system") as it is, and show it as what it
// is. content is an array of blocks, each with a "type":
//
//	{"type":"text","text":"..."}
//	{"type":"tool_use","id":"toolu_1","name":"fs_read","input":{"path":"go.mod"}}
//	{"type":"tool_result","tool_use_id":"toolu_1","content":"module ...","is_error":false}
//	{"type":"thinking","thinking":"...","signature":"..."}
//
// A user message whose content holds tool_result blocks is the harness
// returning tool results, not the person speaking; text beside those results
// is steering added mid-run. A tool_result's content is text; readers also
// accept an array of text blocks. Blocks of other types are kept verbatim.
// A text block may carry citations, the array of citation objects the
// model's API attached to it (Anthropic's web search and document
// citations), kept as the API gave them and sent back with the block:
//
//	{"type":"text","text":"Go 1.26 was released in February","citations":[{"type":"web_search_result_location","url":"https://go.dev/doc/go1.26","title":"Go 1.26 Release Notes","encrypted_index":"Eo8B","cited_text":"Go 1.26 ..."}]}
//
// outcome_unknown, optional in a tool_result and written only when true,
// marks a result the harness made up for a call whose real result was never
// recorded: the process died while the call ran or before it started, and a
// resume had to answer the call to continue. The call may have run and its
// effects may be in place; content says so to the model and is not the
// call's output, and a replay treats the call as one without a result.
// Transcripts written before the field existed say "not run: the session
// ended before this call ran" in that place, which readers take the same
// way.
//
//	{"type":"tool_result","tool_use_id":"toolu_2","content":"outcome unknown: ...","is_error":true,"outcome_unknown":true}
//
// file_changes, optional in a tool_result, names each file the call wrote
// (fs_write, fs_edit) so that a rewind can put it back: path, relative to
// the workspace (the file a link led to); before, the SHA-256 (lowercase
// hex) of its content before the call, "" when the call created it; after,
// the SHA-256 of the content the call left. The content before is kept
// whole, once per content, in $MECHA_HOME/blobs/sha256/XX/REST (XX the
// hash's first two characters, REST the others); a write whose content
// before could not be kept is not made. Results written before the field
// existed have none, and a rewind names such calls as not undone.
//
//	{"type":"tool_result","tool_use_id":"toolu_3","content":"overwrote a.txt (3 bytes written)","is_error":false,"file_changes":[{"path":"a.txt","before":"5f3c…","after":"9e1d…"}]}
//
// An image the person attached to a prompt (an @file mention of a PNG,
// JPEG, GIF or WebP file) is an image block of the user message. Its
// bytes are not in the transcript: they are kept in the same blob store
// under sha256 (lowercase hex of the bytes, checked when read back), and
// the block names them: name, the file as it was mentioned; media_type,
// the type its content shows; size, in bytes. A resume or a replay reads
// the bytes back from the store to send them again. An image block
// without sha256 (another tool's base64 block) is kept verbatim, as
// blocks of unknown types are; readers older than the block keep it
// verbatim too.
//
//	{"record":"message","role":"user","content":[{"type":"text","text":"what is in this picture?"},{"type":"image","name":"shot.png","media_type":"image/png","sha256":"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08","size":2048}],"at":"2026-08-05T09:15:00Z"}
//
//	{"record":"message","role":"user","content":[{"type":"text","text":"what changed?"}],"at":"2026-08-05T09:15:00Z"}
//
// stop_reason, optional on an assistant message, is why the model stopped
// writing it, in its provider's own words, as the provider sent it:
// Anthropic's stop_reason (end_turn, tool_use, max_tokens, stop_sequence,
// pause_turn, refusal, ...) or Chat Completions' finish_reason (stop,
// length, tool_calls, content_filter, ...); the mock's are its script's.
// Readers must accept any value. It is absent on user messages, when the
// provider gave none, and in transcripts written before it existed. An
// assistant message whose stop_reason is pause_turn is a turn the model
// paused (a long run of server-side tools): the next assistant message
// continues it, sent after it with no user message between.
//
//	{"record":"message","role":"assistant","content":[{"type":"text","text":"Let me search."},{"type":"server_tool_use","id":"srvtoolu_01","name":"web_search","input":{"query":"go 1.26 release notes"}}],"stop_reason":"pause_turn","at":"2026-08-05T09:15:04Z"}
//
// taint, a provenance checkpoint written after the messages of each run:
// whether private data or untrusted (outside) content had entered the
// conversation. Checkpoints merge by OR when read: taint only grows, and a
// later clean checkpoint never clears an earlier armed one. A message is
// covered by the first checkpoint written after it; a message with no
// checkpoint after it has unknown provenance, which is never clean.
//
//	{"record":"taint","private":true,"untrusted":false}
//
// summary, written when a run finishes: the tokens it used and how many
// model turns it took, with the provider and model they were spent on and
// why the run stopped. The usage of a session is the sum of its summaries; a
// session that died before writing one totals zero. A run's summary also
// carries session_turns: the turns of the whole session so far, its own
// included (a running total over the runs of a resumed session). It lets a
// lister take the session's turns from the last line of the file without
// reading the rest; it is redundant, never added up (totals add turns),
// and absent from summaries written before it existed, which readers
// then count the long way. An import's one summary and an MCP server's or
// proxy's closing summary (0: no model turns) carry it too.
// context_tokens, optional, is the size of the context at the run's last
// model call (prompt and answer tokens, 0 after a compaction): a resumed
// run compacts before its first call when it is past compact_at_tokens.
//
//	{"record":"summary","usage":{"input_tokens":1200,"output_tokens":340,"cache_read_tokens":0,"cache_write_tokens":0},"turns":3,"provider":"anthropic","model":"claude-opus-5","stop_reason":"end_turn","session_turns":5}
//
// compaction, written when the conversation grew past the configured size
// and older messages were summarised by the model, or when a person asked
// for it (the chat's /compact: everything before the last answer is
// summarised, in an attach of its own whose summary has stop_reason
// "compacted" and no message). From that point the model
// sees one user message holding summary in place of the first replaces
// messages of the session (every message record counts, in file order);
// the replaced messages stay in the file. usage is what summarising cost.
//
//	{"record":"compaction","replaces":14,"summary":"The user asked ...","usage":{"input_tokens":9000,"output_tokens":400,"cache_read_tokens":0,"cache_write_tokens":0}}
//
// tool_call_start, one tools/call an MCP client made to "mecha mcp serve"
// or through "mecha mcp proxy", written when it arrived, before it ran:
// call numbers the session's calls from 1; id, tool, arguments and
// started_at are those of the tool_call below. The tool_call of the same
// call follows once the call is answered; a tool_call_start with none
// after it is a call whose outcome is unknown (the server was killed, or
// its recording stopped, while it ran). Builds that predate it keep it
// as a record they do not know.
//
//	{"record":"tool_call_start","call":3,"id":3,"tool":"fs_read","arguments":{"path":"go.mod"},"started_at":"2026-08-05T09:15:00.123Z","at":"2026-08-05T09:15:00.123Z"}
//
// tool_call, one tools/call an MCP client made to "mecha mcp serve" or
// through "mecha mcp proxy", written when its answer was sent; call is
// the number of its tool_call_start (absent in files written before
// that record was). id is the
// JSON-RPC id of the request as the client sent it (a number or a string;
// null when it could not be seen); tool the tool's name; arguments the
// call's arguments as received, compacted onto one line but otherwise
// byte for byte (null when absent). content is the result's content
// blocks in MCP's own JSON and is_error its isError; structured_content,
// when the result had any, its structured content. A call answered by a
// protocol error instead of a result has null content and the error's
// message in error. started_at is when the call arrived and duration_ms how
// long it took to answer, in milliseconds. Recording is best-effort: a
// server whose session file cannot be written goes on answering calls and
// says so once on stderr; when it closes, it ends the session, if the file
// takes it by then, with a summary whose stop_reason is
// "recording_stopped" and whose error says why. A server or proxy session
// otherwise ends with a summary of stop_reason "closed" and zero usage.
//
//	{"record":"tool_call","call":3,"id":3,"tool":"fs_read","arguments":{"path":"go.mod"},"content":[{"type":"text","text":"module example.com/m"}],"is_error":false,"started_at":"2026-08-05T09:15:00.123Z","duration_ms":0.412,"at":"2026-08-05T09:15:00.124Z"}
//
// # Compatibility
//
// The files in testdata/v1 are frozen: they are never regenerated, and every
// build must read them.
package transcript
