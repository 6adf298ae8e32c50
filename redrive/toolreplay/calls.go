package toolreplay

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/mcp/mcpclient"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Sources of a session's calls, the "source" of a script.
const (
	// SourceTranscript: every call was recovered exactly.
	SourceTranscript = "transcript"
	// SourceReconstructed: the record is damaged and the calls are what
	// could be recovered; the gaps say what was not.
	SourceReconstructed = "reconstructed"
)

// Expect is what a redone call is expected to do, from how it ended in the
// recording.
type Expect int

const (
	// Skip: the call is not redone (it was denied or refused, so it never
	// ran, or its arguments cannot be recovered).
	Skip Expect = iota
	// Succeed: it succeeded in the recording; failing now is a difference.
	Succeed
	// Fail: it failed in the recording and may fail again.
	Fail
	// Unrecorded: its result was never recorded; whatever it does now is
	// allowed, and there is nothing to compare it with.
	Unrecorded
)

// Call is one tool call of a session.
type Call struct {
	// Index counts the session's calls from 1, in the order they were made
	// (parallel calls in call order), the calls not redone included.
	Index int
	ID    string
	Name  string
	// Input is the arguments exactly as recorded.
	Input json.RawMessage
	// Line is the line of the message that made the call (0 when unknown).
	Line int
	// Result is the recorded result; HasResult is false when none was
	// recorded (or a resume made one up).
	Result    string
	IsError   bool
	HasResult bool
	Outcome   sessionview.Outcome
	Expect    Expect
	// Note says why a call is not redone (DeniedInRecording,
	// InterlockedInRecording, ...), or what is unsure about it.
	Note string
	// Server is the MCP server whose tool the call called, as the
	// session's config recorded it (its command and args or URL, never
	// header or environment values); nil for a built-in tool.
	Server *transcript.MCPServer
	// Taint is the conversation's taint as the recording's checkpoints
	// had it when the call was made (those written before its message),
	// or private and untrusted when that is unknown (TaintUnknown).
	Taint transcript.Taint
	// TaintUnknown is true when the recording cannot say what the call's
	// conversation held: no checkpoint follows its message (a build before
	// checkpoints, checkpoints stripped, a run killed before its last), or
	// the session was imported from another harness. Unknown provenance is
	// never clean: Taint is then private and untrusted, as a resume starts.
	TaintUnknown bool
	// TrustedHosts are the hosts the run's interlock trusted when the call
	// was made, by what the recording holds: those the prompts typed so
	// far and the attach's system prompt named, and the attach's
	// trusted_hosts (config.toml's) and the shell's egress allowlist
	// (sandbox_allow_domains). Hosts the run reached before its
	// conversation held untrusted content are not here: a rerun's tracker
	// learns them as it redoes the calls, a script from the calls before
	// (see ReachedHosts).
	TrustedHosts []string

	// served is true for a tool_call record's call (an MCP client's, or a
	// rerun's), whose conversation the recording never saw: its taint is
	// the checkpoints', never made unknown.
	served bool
}

// Why a call the recording did not run is not redone: the Note of such a
// call, the reason a rerun gives for skipping it, a script's comment.
const (
	// DeniedInRecording: the permission gate denied it (nobody said yes)
	// or refused it (read-only mode).
	DeniedInRecording = "denied in the recording"
	// InterlockedInRecording: the trifecta interlock refused it, as one
	// that could send data out of an armed conversation.
	InterlockedInRecording = "refused by the interlock in the recording"
)

// NotRun reports whether the recording did not run the call: the gate
// denied it or the interlock refused it. Such a call is never redone and
// is no gap: nothing of it was lost.
func (c Call) NotRun() bool {
	switch c.Outcome {
	case sessionview.Denied, sessionview.Refused, sessionview.Interlocked:
		return true
	}
	return false
}

// Gap is something the record lost. Index is the call it concerns or, for
// a line that could not be read, the index the next recovered call has
// (one past the last call for a gap at the end).
type Gap struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
	// lost is true for a line that could not be read: at the same index,
	// it comes before the call's own gap, being before the call.
	lost bool
}

// Calls are the calls of a session: one extraction shared by the script,
// the rerun and anything else that redoes them.
type Calls struct {
	Meta   transcript.Meta
	Path   string
	Calls  []Call
	Gaps   []Gap
	Source string
	// RecordingStopped says the server that recorded the session could
	// not write it at some point and went on answering: calls are missing.
	RecordingStopped bool

	// servers are the MCP servers of the attach being read: the config's
	// mcp_servers, or its proxy upstream as one server.
	servers  []transcript.MCPServer
	upstream *transcript.MCPServer
	// promptHosts are the hosts the prompts read so far named (a run
	// trusts those of its session's earlier prompts too); attachHosts
	// those the current attach's system prompt named, its trusted_hosts
	// and its egress allowlist.
	promptHosts, attachHosts []string
	// taint merges the checkpoints read so far; checked is the line of
	// the last checkpoint.
	taint   transcript.Taint
	checked int
}

// UpstreamName is what the server of a proxy session recorded without
// --name is called: its tools are redone as mcp__upstream__TOOL.
const UpstreamName = "upstream"

// Servers returns the MCP servers the redone calls need, each once, in
// the order the calls first need them. Two servers of one name that
// were recorded differently (the session was resumed with another
// command) are both returned. One server recorded by several attaches
// with its tools declaring differently (the session was resumed under
// another tool_capabilities) is returned once, each tool declaring the
// union of what was recorded of it: one server started for every call
// must not judge a call narrower than its attach did.
func (c *Calls) Servers() []transcript.MCPServer {
	var out []transcript.MCPServer
	for _, call := range c.Redone() {
		if call.Server == nil {
			continue
		}
		i := slices.IndexFunc(out, func(s transcript.MCPServer) bool { return SameServer(s, *call.Server) })
		if i < 0 {
			out = append(out, *call.Server)
			continue
		}
		out[i].ToolCapabilities = unionCapabilities(out[i].ToolCapabilities, call.Server.ToolCapabilities)
	}
	return out
}

// unionCapabilities is, for each tool, the union of the capability names
// a and b record of it. Nil (a record that predates tool_capabilities:
// every capability) absorbs anything.
func unionCapabilities(a, b map[string][]string) map[string][]string {
	if a == nil || b == nil {
		return nil
	}
	out := make(map[string][]string, len(a))
	for tool, names := range a {
		out[tool] = names
	}
	for tool, names := range b {
		merged := slices.Clone(out[tool])
		for _, n := range names {
			if !slices.Contains(merged, n) {
				merged = append(merged, n)
			}
		}
		out[tool] = merged
	}
	return out
}

// SameServer reports whether two recorded servers are reached the same
// way under the same name.
func SameServer(a, b transcript.MCPServer) bool {
	return a.Name == b.Name && a.Transport == b.Transport && a.Command == b.Command &&
		slices.Equal(a.Args, b.Args) && a.URL == b.URL
}

// Lossy reports whether anything was lost.
func (c *Calls) Lossy() bool { return len(c.Gaps) > 0 }

// Why says in a few words why a lossy record is not exact.
func (c *Calls) Why() string {
	switch {
	case c.Meta.ImportedFrom != nil:
		return "the session was imported from " + c.Meta.ImportedFrom.Harness + " and is not an exact record"
	case c.RecordingStopped:
		return "the server's recording stopped while it answered calls, so the record misses some"
	}
	return "the record is damaged"
}

// Redone returns the calls that are run again, in order.
func (c *Calls) Redone() []Call {
	var out []Call
	for _, call := range c.Calls {
		if call.Expect != Skip {
			out = append(out, call)
		}
	}
	return out
}

// Extract reads the calls of the session at path, pairing each call with
// its result through sessionview (the one place calls meet results).
// Every call that ran is kept with its exact arguments and recorded
// result. A call the gate denied or the interlock refused never ran: it is
// kept, marked Skip, with a note saying which (NotRun), and it is no gap.
// What the record lost becomes a gap: a call with no recorded result (the
// process was killed while it ran, or a resume made its result up),
// arguments that are not a JSON object (of a call that would be redone), a
// line that could not be read.
func Extract(path string) (*Calls, error) {
	c := &Calls{Path: path}
	totals, err := sessionview.Stream(path, nil, func(it sessionview.Item) error {
		switch it := it.(type) {
		case *sessionview.Header:
			c.Meta = it.Meta
		case *sessionview.Attach:
			c.attach(it.Config)
		case *sessionview.User:
			if (it.Results || it.Prompt()) && c.Meta.ImportedFrom == nil {
				// A turn, or steering beside the results: typed (not
				// known to be in an imported session, as a resume of it
				// does not trust them either).
				c.promptHosts = append(c.promptHosts, tool.HostsInText(transcript.Typed(it.Text()))...)
			}
		case *sessionview.Checkpoint:
			c.taint, c.checked = it.Merged, it.Line()
		case *sessionview.Reply:
			for _, vc := range it.Calls {
				c.add(it.Line(), vc)
			}
		case *sessionview.Served:
			vc := servedCall(it.Call)
			if it.NoResult != "" {
				vc.Result = nil // it arrived and was never answered
			}
			if c.upstream != nil {
				// A proxy's record names the upstream's own tool: redone
				// through mecha's client, it is mcp__<server>__<tool>.
				vc.Name = mcpclient.ToolName(c.upstream.Name, vc.Name)
			}
			c.add(it.Line(), vc)
			c.Calls[len(c.Calls)-1].served = true
		case *sessionview.RunEnd:
			if s := it.Summary; s.StopReason == transcript.StopRecordingStopped {
				c.RecordingStopped = true
				// A server that could not write its session went on
				// answering: the calls after the failure are not here.
				why := strings.TrimPrefix(s.Error, "recording stopped: ")
				if why == "" {
					why = "the session file could not be written"
				}
				c.Gaps = append(c.Gaps, Gap{Index: len(c.Calls) + 1, Reason: fmt.Sprintf(
					"recording stopped after call %d (%s): the server went on answering, and the calls it answered after that are not on the record", len(c.Calls), why)})
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.unknownTaint()
	if err := c.lostLines(totals.Skips); err != nil {
		return nil, err
	}
	if f := c.Meta.ImportedFrom; f != nil && f.ApproximateMore > 0 {
		c.Gaps = append(c.Gaps, Gap{Index: len(c.Calls) + 1, Reason: fmt.Sprintf(
			"imported from %s: %d more calls were mapped approximately than the header names", f.Harness, f.ApproximateMore)})
	}
	c.Source = SourceTranscript
	if c.Lossy() {
		c.Source = SourceReconstructed
	}
	return c, nil
}

// unknownTaint makes the taint of each call the recording cannot vouch
// for private and untrusted (see Call.TaintUnknown).
func (c *Calls) unknownTaint() {
	for i := range c.Calls {
		call := &c.Calls[i]
		if !call.served && (c.Meta.ImportedFrom != nil || call.Line > c.checked) {
			call.Taint, call.TaintUnknown = transcript.Taint{Private: true, Untrusted: true}, true
		}
	}
}

// attach takes the MCP servers of a config record: the servers whose
// tools a run offered, or the upstream of a proxy session.
func (c *Calls) attach(rc *transcript.Config) {
	c.servers, c.upstream = rc.MCPServers, nil
	c.attachHosts = append(slices.Clone(rc.TrustedHosts), rc.SandboxAllowDomains...)
	if rc.SystemPrompt != nil {
		c.attachHosts = append(c.attachHosts, tool.HostsInText(*rc.SystemPrompt)...)
	}
	if up := rc.MCPUpstream; up != nil {
		s := transcript.MCPServer{Name: up.Name, Transport: up.Transport, Command: up.Command, Args: up.Args, URL: up.URL,
			ServerName: up.Server.Name, ServerVersion: up.Server.Version, ProtocolVersion: up.Server.ProtocolVersion}
		if s.Name == "" {
			s.Name = UpstreamName
		}
		c.upstream = &s
	}
}

// trusted is the hosts trusted text and config gave the interlock so far,
// sorted, each once (nil for none).
func (c *Calls) trusted() []string {
	hs := append(slices.Clone(c.attachHosts), c.promptHosts...)
	if len(hs) == 0 {
		return nil
	}
	slices.Sort(hs)
	return slices.Compact(hs)
}

// serverOf returns the recorded server that offered the tool name.
func (c *Calls) serverOf(name string) *transcript.MCPServer {
	if c.upstream != nil && strings.HasPrefix(name, mcpclient.ServerPrefix(c.upstream.Name)+"__") {
		return c.upstream
	}
	for i := range c.servers {
		if slices.Contains(c.servers[i].Tools, name) {
			s := c.servers[i]
			return &s
		}
	}
	return nil
}

// servedCall is a tool_call record (a call an MCP client made, or one a
// rerun redid) as a call with its result. A protocol error in place of a
// result is a failure whose result is the error; a record with neither has
// no result.
func servedCall(tc *transcript.ToolCall) sessionview.Call {
	vc := sessionview.Call{ID: string(tc.ID), Name: tc.Tool, Input: tc.Arguments}
	if string(bytes.TrimSpace(tc.Arguments)) == "null" {
		vc.Input = nil
	}
	switch {
	case tc.Error != "":
		vc.Result = &sessionview.Result{Content: tc.Error, IsError: true}
	case len(tc.Content) > 0 && string(tc.Content) != "null":
		vc.Result = &sessionview.Result{Content: ContentText(tc.Content), IsError: tc.IsError}
	}
	return vc
}

// ContentText is the text of MCP content blocks: the text blocks joined
// by newlines, any other block as [TYPE].
func ContentText(raw json.RawMessage) string {
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return string(raw)
	}
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		if b.Type == "text" {
			parts[i] = b.Text
		} else {
			parts[i] = "[" + b.Type + "]"
		}
	}
	return strings.Join(parts, "\n")
}

// agentTool is the subagent tool's name (subagent.Name): its calls run a
// child agent loop, a model, which a tool replay never does.
const agentTool = "agent"

func (c *Calls) add(line int, vc sessionview.Call) {
	call := Call{Index: len(c.Calls) + 1, ID: vc.ID, Name: vc.Name, Input: vc.Input, Line: line, Outcome: vc.Outcome(),
		Server: c.serverOf(vc.Name), Taint: c.taint, TrustedHosts: c.trusted()}
	if r := vc.Result; r != nil && !r.OutcomeUnknown {
		call.Result, call.IsError, call.HasResult = r.Content, r.IsError, true
	}
	gap := func(reason string) {
		c.Gaps = append(c.Gaps, Gap{Index: call.Index, Reason: fmt.Sprintf("call %d (%s): %s", call.Index, call.Name, reason)})
	}
	switch call.Outcome {
	case sessionview.Succeeded:
		call.Expect = Succeed
	case sessionview.Failed:
		call.Expect = Fail
	case sessionview.Denied, sessionview.Refused:
		call.Expect, call.Note = Skip, DeniedInRecording
	case sessionview.Interlocked:
		call.Expect, call.Note = Skip, InterlockedInRecording
	case sessionview.Unknown:
		call.Expect = Unrecorded
		call.Note = "its outcome is unknown: a resume answered it because its result was never recorded; it may have run"
		gap("its result was never recorded (a resume answered it as outcome unknown); it is redone, and allowed to fail")
	default: // Unanswered
		call.Expect = Unrecorded
		call.Note = "its result was never recorded: the run ended (was killed?) while it ran or before; it may have run"
		gap("its result was never recorded (the run ended while it ran, or before it started); it is redone, and allowed to fail")
	}
	if f := c.Meta.ImportedFrom; f != nil && slices.Contains(f.Approximate, call.ID) {
		call.Note = "imported from " + f.Harness + ": mapped approximately onto " + call.Name
		gap("imported from " + f.Harness + ": what it ran is mapped only approximately onto " + call.Name)
	}
	if call.Name == agentTool && call.Expect != Skip {
		call.Expect = Skip
		call.Note = "an agent call runs a model (its child session's calls are redone from that session)"
	}
	// Arguments lost are a gap only where they would be redone: a call
	// that never ran loses nothing by not being redone.
	if err := CheckInput(call.Input); err != nil && call.Expect != Skip {
		call.Expect = Skip
		call.Note = "its arguments are not a JSON object"
		gap("its arguments are not a JSON object, so it cannot be redone: " + string(call.Input))
	}
	c.Calls = append(c.Calls, call)
}

// lostLines adds a gap for each line the read skipped, at its place among
// the calls: a torn or unparseable line may have held a call or a result.
func (c *Calls) lostLines(sk session.Skips) error {
	if sk.Count == 0 {
		return nil
	}
	want := map[int]bool{}
	for _, l := range sk.Lines {
		want[l.Line] = true
	}
	held, err := rawLines(c.Path, want)
	if err != nil {
		return err
	}
	for _, l := range sk.Lines {
		at := 1
		for _, call := range c.Calls {
			if call.Line < l.Line {
				at = call.Index + 1
			}
		}
		what := "cannot be parsed"
		if l.Torn {
			what = "is cut short (torn)"
		}
		lost := "whatever it held is lost"
		raw := held[l.Line]
		switch {
		case bytes.Contains(raw, []byte(`"tool_use"`)):
			lost = "it held a tool call, whose name and arguments are lost"
		case bytes.Contains(raw, []byte(`"tool_result"`)):
			lost = "it held a tool result, which is lost"
		case bytes.Contains(raw, []byte(`"tool_call"`)):
			lost = "it held a tool call record, which is lost"
		}
		c.Gaps = append(c.Gaps, Gap{Index: at, Reason: fmt.Sprintf("line %d %s: %s", l.Line, what, lost), lost: true})
	}
	if more := sk.Count - len(sk.Lines); more > 0 {
		c.Gaps = append(c.Gaps, Gap{Index: len(c.Calls) + 1, Reason: fmt.Sprintf("%d more lines cannot be read; what they held is lost", more), lost: true})
	}
	slices.SortStableFunc(c.Gaps, func(a, b Gap) int {
		if a.Index != b.Index {
			return cmp.Compare(a.Index, b.Index)
		}
		switch {
		case a.lost && !b.lost:
			return -1
		case b.lost && !a.lost:
			return 1
		}
		return 0
	})
	return nil
}

// rawLines returns the text of the lines numbered in want (from 1), each
// cut at 4 KiB: enough to tell what kind of record a damaged line held.
func rawLines(path string, want map[int]bool) (map[int][]byte, error) {
	f, err := safeopen.Open(path)
	if err != nil {
		return nil, fmt.Errorf("toolreplay: %w", err)
	}
	defer f.Close()
	out := map[int][]byte{}
	r := bufio.NewReaderSize(f, 64<<10)
	for n := 1; len(out) < len(want); n++ {
		var line []byte
		for {
			chunk, err := r.ReadSlice('\n')
			if want[n] && len(line) < 4<<10 {
				line = append(line, chunk[:min(len(chunk), 4<<10-len(line))]...)
			}
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			if errors.Is(err, io.EOF) {
				if want[n] {
					out[n] = line
				}
				return out, nil
			}
			if err != nil {
				return nil, fmt.Errorf("toolreplay: %w", err)
			}
			break
		}
		if want[n] {
			out[n] = line
		}
	}
	return out, nil
}

// beforeActs is every capability a build before acts_outward knew of: a
// tool recorded with all of them was one its configuration did not narrow.
var beforeActs = tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, External: true}

// ServerConfig is how a recorded server is started again: its command and
// args, or its URL, as recorded (with ${VAR} references expanded when it
// starts), its tools declaring what the recording says they declared (the
// record is the truth, not today's configuration). No environment or
// headers were recorded. A tool the recording names no capabilities for
// (a transcript older than tool_capabilities, a tool offered only today)
// declares every capability; so does one whose recorded names this build
// does not know, and one recorded with every capability a build before
// acts_outward knew (it declared everything then): never narrower than
// the recording could have meant.
func ServerConfig(s transcript.MCPServer) mcpclient.ServerConfig {
	c := mcpclient.ServerConfig{Name: s.Name, Transport: s.Transport, Command: s.Command, Args: s.Args, URL: s.URL,
		Source: "the recording"}
	if c.Command != "" {
		c.URL = ""
	}
	for remote, names := range s.ToolCapabilities {
		caps, err := mcpclient.ParseCapabilities(names)
		if err != nil {
			continue
		}
		if caps == beforeActs {
			// Every capability a build before acts_outward knew: what it
			// recorded for a tool nothing narrowed. It meant everything.
			caps.ActsOutward = true
		}
		if c.ToolCapabilities == nil {
			c.ToolCapabilities = map[string]tool.Capabilities{}
		}
		c.ToolCapabilities[remote] = caps
	}
	return c
}
