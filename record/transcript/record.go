package transcript

import (
	"encoding/json"
	"math"
	"time"
)

// FormatVersion is the value of the meta record's "format" field written by
// this build. Readers accept any version they know how to read.
const FormatVersion = 1

// Line limits (see the package documentation): readers refuse longer
// lines, and writers never write them.
const (
	// MaxHeader is the longest header line, in bytes without its newline.
	// A file whose first line is longer is not a session.
	MaxHeader = 64 << 10
	// MaxLine is the longest line of any other record, in bytes without
	// its newline. A longer line is skipped as oversized.
	MaxLine = 64 << 20
)

// Record kinds, the value of every line's "record" field.
const (
	KindMeta    = "meta"
	KindConfig  = "config"
	KindMessage = "message"
	KindTaint   = "taint"
	KindSummary = "summary"
	// KindCompaction marks where older messages were replaced by a summary.
	KindCompaction = "compaction"
	// KindToolCall is one tool call an MCP client made to mecha's server
	// or through its recording proxy.
	KindToolCall = "tool_call"
	// KindToolCallStart is such a call as it arrived, before its answer:
	// one with no tool_call after it never got one (the server stopped).
	KindToolCallStart = "tool_call_start"
)

// Roles of a message record.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Record is one line of a transcript. The concrete types are *Meta, *Config,
// *Message, *Taint, *Summary, *Compaction, *ToolCall, *ToolCallStart and
// *Unknown.
type Record interface {
	// Kind returns the value of the record's "record" field.
	Kind() string
	// Time returns the record's "at" timestamp, zero when absent.
	Time() time.Time
}

// Meta is the header: always the first line of a transcript.
type Meta struct {
	Format    int       `json:"format"`
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	Workspace string    `json:"workspace"`
	Title     string    `json:"title"`
	// ReplayOf names the session this one replays, when it is a replay.
	ReplayOf string `json:"replay_of,omitempty"`
	// RerunOf names the session whose tool calls this one redoes, when it
	// is a rerun ("mecha rerun").
	RerunOf string `json:"rerun_of,omitempty"`
	// MCPClient is the MCP client a server or proxy session served, as it
	// named itself in initialize; nil for every other session.
	MCPClient *MCPPeer `json:"mcp_client,omitempty"`
	// ImportedFrom names the transcript of another harness this session
	// was converted from ("mecha import"); nil for every other session.
	ImportedFrom *ImportedFrom `json:"imported_from,omitempty"`
	// ReflectsOn names the session a reflection ("mecha reflect") read.
	ReflectsOn string `json:"reflects_on,omitempty"`
	// Distill is true for a session that distilled reflections into
	// rules ("mecha distill", "mecha learn").
	Distill bool `json:"distill,omitempty"`
	// Parent names the session and the call that started this one, for a
	// subagent's child run; nil for every other session.
	Parent *ParentCall `json:"parent,omitempty"`
	// ForkOf names the session and the turn a rewind went back to: this
	// session continues that one from before its prompt Turn ("mecha
	// rewind"); nil for every other session.
	ForkOf *Fork     `json:"fork_of,omitempty"`
	At     time.Time `json:"at,omitzero"`
}

// Fork is where a rewound session was forked from.
type Fork struct {
	Session string `json:"session"`
	Turn    int    `json:"turn"`
}

// ParentCall is the call of a parent session that a child session answers.
type ParentCall struct {
	Session string `json:"session"`
	CallID  string `json:"call_id"`
}

// ImportedFrom is where an imported session came from: the harness that
// wrote it and the path of its file, and the ids of the tool calls whose
// mapping onto mecha's tools only approximates what the source ran.
type ImportedFrom struct {
	// Harness is "claude-code" or "codex".
	Harness string `json:"harness"`
	// Path is the absolute path of the source file when it was imported.
	Path string `json:"path"`
	// Approximate are the tool_use ids of calls mapped approximately (a
	// search tool turned into a shell command, say); a replay or script
	// of them is lossy. At most MaxApproximate ids are kept.
	Approximate []string `json:"approximate,omitempty"`
	// ApproximateMore counts the approximate calls past MaxApproximate.
	ApproximateMore int `json:"approximate_more,omitempty"`
	// Entries counts the source's entries (its non-empty lines); zero in
	// sessions imported before it was recorded.
	Entries int `json:"entries,omitempty"`
	// Skipped counts the source entries that were not imported, by reason
	// (the Skip constants; an import never loses an entry without counting
	// it). Absent when every entry was imported, and in sessions imported
	// before it was recorded.
	Skipped map[string]int `json:"skipped,omitempty"`
}

// MaxApproximate bounds ImportedFrom.Approximate, which keeps the header
// far below MaxHeader.
const MaxApproximate = 256

// MCPPeer is one side of an MCP connection as it named itself during
// initialize: its implementation name and version, and the protocol
// version the connection negotiated.
type MCPPeer struct {
	Name            string `json:"name"`
	Version         string `json:"version"`
	ProtocolVersion string `json:"protocol_version,omitempty"`
}

// MCPUpstream is the server a recording proxy forwards to: how it was
// reached (a command and its arguments, or a URL; never environment or
// header values) and who answered.
type MCPUpstream struct {
	// Name is what the proxy was told to call the server (--name).
	Name string `json:"name,omitempty"`
	// Transport is "stdio" (a command) or "http" (streamable HTTP).
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	// Server is the upstream's serverInfo and the protocol version it and
	// the proxy negotiated.
	Server MCPPeer `json:"server"`
}

// Config is the run configuration of one attach: every setting that shapes a
// request or constrains the run. Optional values that were not set are
// encoded as null, never as an invented default.
type Config struct {
	MechaVersion      string   `json:"mecha_version"`
	Provider          string   `json:"provider"`
	Model             string   `json:"model"`
	Workspace         string   `json:"workspace"`
	SystemPrompt      *string  `json:"system_prompt"`
	Tools             []string `json:"tools"`
	Effort            *string  `json:"effort"`
	Temperature       *float64 `json:"temperature"`
	Seed              *uint64  `json:"seed"`
	Thinking          bool     `json:"thinking"`
	CachePrompt       bool     `json:"cache_prompt"`
	MaxTokens         int      `json:"max_tokens"`
	MaxTurns          int      `json:"max_turns"`
	MaxOutputTokens   *uint64  `json:"max_output_tokens"`
	MaxCostUSD        *float64 `json:"max_cost_usd"`
	CompactAtTokens   *uint64  `json:"compact_at_tokens"`
	CompactKeepRecent int      `json:"compact_keep_recent"`
	PermissionMode    string   `json:"permission_mode"`
	// PermissionRules are the saved permission rules the attach's gate
	// applied; absent when there were none (and in records written before
	// they existed).
	PermissionRules []PermissionRule `json:"permission_rules,omitempty"`
	Trifecta        string           `json:"trifecta"`
	// TrustedHosts are config.toml's [trifecta] trusted_hosts for this
	// attach: hosts the interlock let a call reach after untrusted
	// content, no prompt naming them. Absent when there were none (and in
	// records written before they existed).
	TrustedHosts   []string `json:"trusted_hosts,omitempty"`
	Sandbox        string   `json:"sandbox"`
	SandboxNetwork bool     `json:"sandbox_network"`
	// WorkspaceTrust is whether the workspace was trusted for this attach,
	// and why. Nil in transcripts that predate it (see doc.go: such an
	// attach is judged by the configuration of today).
	WorkspaceTrust *WorkspaceTrust `json:"workspace_trust,omitempty"`
	// SandboxNamespaces says the confined shell also ran in namespaces of
	// its own; SandboxReadDeny are the paths it could not read.
	SandboxNamespaces bool     `json:"sandbox_namespaces,omitempty"`
	SandboxReadDeny   []string `json:"sandbox_read_deny,omitempty"`
	// SandboxAllowDomains are the hosts the shell could reach through the
	// egress proxy (its network otherwise cut); SandboxSendDomains those
	// of them marked as able to receive data, which make the shell an
	// exfiltration route for the interlock.
	SandboxAllowDomains []string `json:"sandbox_allow_domains,omitempty"`
	SandboxSendDomains  []string `json:"sandbox_send_domains,omitempty"`
	// MCPServers are the MCP servers whose tools were offered, in the
	// order they were configured. Absent when none was (and in
	// transcripts that predate MCP).
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	// MCPUpstream is the server a recording proxy session forwarded to;
	// nil for every other session.
	MCPUpstream *MCPUpstream `json:"mcp_upstream,omitempty"`
	// ToolSpecs is what the model was told about each offered tool, in
	// registry order; it comes last because it is by far the longest.
	// Nil in transcripts that predate it (the field is then absent);
	// empty when no tool was offered.
	ToolSpecs []ToolSpec `json:"tool_specs,omitzero"`
	At        time.Time  `json:"at,omitzero"`
	// Nulls names the settings of a type without a null (a string, a
	// number, a flag) that the line held as null: an import writes null
	// for what the other harness never recorded, and a run for a flag
	// its provider does not send (thinking, cache_prompt). Decode fills
	// it and AppendEncode writes those settings back as null, so a record
	// read and written again still says it did not know them. Not in the
	// JSON.
	Nulls []string `json:"-"`
}

// WorkspaceTrust is the decision an attach ran under about its workspace:
// trusted, its files read as the owner's, or not, what the tools read there
// counted as untrusted and its AGENTS.md or CLAUDE.md left out of the
// system prompt.
type WorkspaceTrust struct {
	Trusted bool `json:"trusted"`
	// By says why: TrustByConfig (an entry of config.toml's
	// trusted_workspaces covers the workspace), TrustByQuestion (the
	// chat's question was answered), TrustByRecord (the session was
	// recorded untrusted, and stays so), TrustByDefault (nothing trusts
	// it). Readers must accept other values.
	By string `json:"by"`
	// Entry is the trusted_workspaces entry that covers the workspace
	// (the workspace itself or a parent); empty when none does.
	Entry string `json:"entry,omitempty"`
}

// The reasons of a WorkspaceTrust.
const (
	TrustByConfig   = "config"
	TrustByQuestion = "question"
	TrustByRecord   = "recorded"
	TrustByDefault  = "default"
)

// ToolSpec is what the model was told about one tool: the name it calls it
// by, its description and the JSON Schema of its input.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// MCPServer is one connected MCP server as a config record stores it: how
// it was reached, as configured (${VAR} references unexpanded; header and
// environment values are never recorded), who answered, and what it
// offered.
type MCPServer struct {
	// Name is the server's name in mecha's configuration.
	Name string `json:"name"`
	// Transport is "stdio" (Command and Args) or "http" (URL).
	Transport string   `json:"transport"`
	Command   string   `json:"command,omitempty"`
	Args      []string `json:"args,omitempty"`
	URL       string   `json:"url,omitempty"`
	// ServerName and ServerVersion are the serverInfo the server answered
	// initialize with; ProtocolVersion is the version negotiated.
	ServerName      string `json:"server_name"`
	ServerVersion   string `json:"server_version"`
	ProtocolVersion string `json:"protocol_version"`
	// Tools are the names the model was offered for the server's tools
	// (mcp__<server>__<tool>), in the server's order.
	Tools []string `json:"tools"`
	// ToolCapabilities is what each offered tool declared, by the server's
	// own name for it: the capability names the interlock, the gate and
	// the taint tracker judged its calls by. Nil in transcripts that
	// predate it (what the tools declared is then unknown).
	ToolCapabilities map[string][]string `json:"tool_capabilities,omitempty"`
}

// Message is one conversation message.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
	// StopReason is why the model stopped writing an assistant message,
	// in its provider's own words (Anthropic's stop_reason, Chat
	// Completions' finish_reason). Empty on user messages, when the
	// provider gave none, and in transcripts that predate it.
	StopReason string    `json:"stop_reason,omitempty"`
	At         time.Time `json:"at,omitzero"`
}

// Taint is a provenance checkpoint: whether anything private or untrusted
// had entered the conversation by the time it was written.
type Taint struct {
	Private   bool      `json:"private"`
	Untrusted bool      `json:"untrusted"`
	At        time.Time `json:"at,omitzero"`
}

// Merge returns the union of two taint states: taint only grows.
func (t Taint) Merge(o Taint) Taint {
	return Taint{Private: t.Private || o.Private, Untrusted: t.Untrusted || o.Untrusted}
}

// Clean reports whether neither flag is set.
func (t Taint) Clean() bool { return !t.Private && !t.Untrusted }

// Usage counts tokens.
type Usage struct {
	InputTokens      uint64 `json:"input_tokens"`
	OutputTokens     uint64 `json:"output_tokens"`
	CacheReadTokens  uint64 `json:"cache_read_tokens"`
	CacheWriteTokens uint64 `json:"cache_write_tokens"`
}

// Add returns the sum of two usages. Each count saturates at the largest
// uint64 rather than wrapping round: a total at that value means "at least
// this many" (see Saturated).
func (u Usage) Add(o Usage) Usage {
	return Usage{
		InputTokens:      AddTokens(u.InputTokens, o.InputTokens),
		OutputTokens:     AddTokens(u.OutputTokens, o.OutputTokens),
		CacheReadTokens:  AddTokens(u.CacheReadTokens, o.CacheReadTokens),
		CacheWriteTokens: AddTokens(u.CacheWriteTokens, o.CacheWriteTokens),
	}
}

// Saturated reports whether any count reached the largest uint64, where
// sums stop: the true total is at least that.
func (u Usage) Saturated() bool {
	return u.InputTokens == math.MaxUint64 || u.OutputTokens == math.MaxUint64 ||
		u.CacheReadTokens == math.MaxUint64 || u.CacheWriteTokens == math.MaxUint64
}

// AddTokens adds two token counts, saturating at the largest uint64.
func AddTokens(a, b uint64) uint64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxUint64
}

// AddTurns adds two turn counts, saturating at the largest (or smallest)
// int rather than wrapping round; a total of math.MaxInt means "at least".
func AddTurns(a, b int) int {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt
	case b < 0 && s > a:
		return math.MinInt
	}
	return s
}

// StopRecordingStopped is the stop_reason of a server's or proxy's
// summary when its session could not be written at some point: the calls
// answered after that are not on the record.
const StopRecordingStopped = "recording_stopped"

// Summary is written when a run finishes.
type Summary struct {
	Usage Usage `json:"usage"`
	Turns int   `json:"turns"`
	// Provider and Model say whose tokens these are, so a session resumed
	// against another model is still attributed correctly. Empty in
	// transcripts that predate them: the meta's values apply.
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// StopReason says why the run ended (end_turn, max_turns, error, ...).
	StopReason string    `json:"stop_reason,omitempty"`
	Error      string    `json:"error,omitempty"`
	At         time.Time `json:"at,omitzero"`
	// ContextTokens is the size of the context at the run's last model
	// call (its prompt and answer tokens; 0 right after a compaction; the
	// run before's when it made none), so that a run resumed later
	// compacts before its first call when the context is past
	// compact_at_tokens. Absent when nothing is known (0), and in
	// transcripts that predate it.
	ContextTokens uint64 `json:"context_tokens,omitempty"`
	// SessionTurns is the session's turns up to and including this run
	// (the earlier summaries' Turns plus this one's), so that a reader
	// can take a session's total from its last summary alone. Nil in
	// transcripts that predate it and in summaries written by something
	// other than a run. Only for that shortcut: sums over summaries add
	// Turns, never this.
	SessionTurns *int `json:"session_turns,omitempty"`
}

// Compaction records that the conversation the model sees was compacted:
// from here on, the first Replaces messages of the session (counted over
// every message record in the file) are replaced by one user message
// holding Summary. The messages themselves stay in the file.
type Compaction struct {
	Replaces int    `json:"replaces"`
	Summary  string `json:"summary"`
	// Usage is what the summarising request cost.
	Usage Usage     `json:"usage"`
	At    time.Time `json:"at,omitzero"`
}

// ToolCall is one tools/call an MCP client made, recorded as it ran by
// "mecha mcp serve" or "mecha mcp proxy".
type ToolCall struct {
	// Call is the call's number in the session (from 1), the one its
	// tool_call_start record has; 0 in records written before
	// tool_call_start was.
	Call int `json:"call,omitempty"`
	// ID is the JSON-RPC id of the request as the client sent it (a
	// number or a string); null when it could not be seen.
	ID   json.RawMessage `json:"id"`
	Tool string          `json:"tool"`
	// Arguments are the call's arguments as received (compacted onto one
	// line, otherwise byte for byte); null when the call had none.
	Arguments json.RawMessage `json:"arguments"`
	// Content is the result's content blocks as sent back, in MCP's own
	// JSON ({"type":"text","text":...}, ...); null when no result was.
	Content json.RawMessage `json:"content"`
	// StructuredContent is the result's structured content, when it had
	// any.
	StructuredContent json.RawMessage `json:"structured_content,omitempty"`
	IsError           bool            `json:"is_error"`
	// Error is the protocol error that answered the call in place of a
	// result (an unknown tool, a cancelled call, an upstream gone).
	Error      string    `json:"error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS float64   `json:"duration_ms"`
	At         time.Time `json:"at,omitzero"`
}

// ToolCallStart is a tool call an MCP client made, written when it
// arrived; the ToolCall of the same Call follows once it is answered.
type ToolCallStart struct {
	Call      int             `json:"call"`
	ID        json.RawMessage `json:"id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	StartedAt time.Time       `json:"started_at"`
	At        time.Time       `json:"at,omitzero"`
}

// Unknown is a record of a kind this build does not know. It is kept
// verbatim so that nothing is lost when it is read and written back.
type Unknown struct {
	Record string
	Raw    json.RawMessage
	At     time.Time
}

func (*Meta) Kind() string          { return KindMeta }
func (*Config) Kind() string        { return KindConfig }
func (*Message) Kind() string       { return KindMessage }
func (*Taint) Kind() string         { return KindTaint }
func (*Summary) Kind() string       { return KindSummary }
func (*Compaction) Kind() string    { return KindCompaction }
func (*ToolCall) Kind() string      { return KindToolCall }
func (*ToolCallStart) Kind() string { return KindToolCallStart }
func (u *Unknown) Kind() string {
	return u.Record
}

func (r *Meta) Time() time.Time          { return r.At }
func (r *Config) Time() time.Time        { return r.At }
func (r *Message) Time() time.Time       { return r.At }
func (r *Taint) Time() time.Time         { return r.At }
func (r *Summary) Time() time.Time       { return r.At }
func (r *Compaction) Time() time.Time    { return r.At }
func (r *ToolCall) Time() time.Time      { return r.At }
func (r *ToolCallStart) Time() time.Time { return r.At }
func (r *Unknown) Time() time.Time       { return r.At }

// PermissionRule is one saved permission rule a config record names:
// the rule as written ("shell(go test ./...)"), allow or deny, and the
// file it came from.
type PermissionRule struct {
	Rule   string `json:"rule"`
	Effect string `json:"effect"`
	Source string `json:"source"`
}
