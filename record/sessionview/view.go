package sessionview

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Item is one entry of a session's view. Items come in file order, one per
// record: *Header, *Attach, *User, *Reply, *Aside, *Checkpoint, *RunEnd,
// *Compacted, *Served or *Other.
type Item interface {
	// Line is the 1-based line of the record in the file, 0 when the view
	// was built from records already loaded (Walk).
	Line() int
}

// Pos is where an item's record is in the file.
type Pos struct{ N int }

// Line returns the record's line.
func (p Pos) Line() int { return p.N }

// Header is the session's meta record, always the first item.
type Header struct {
	Pos
	Meta transcript.Meta
	Path string
}

// Attach is a config record: a process attached to the session to run in
// it. N counts attaches from 1; Prev is the config of the attach before
// (nil for the first) and Changes what differs from it.
type Attach struct {
	Pos
	N       int
	Config  *transcript.Config
	Prev    *transcript.Config
	Changes []Change
}

// Change is one setting that differs between consecutive attaches, named by
// its JSON field. From and To are its JSON values (nil, bool, string,
// json.Number, []any).
type Change struct {
	Field    string
	From, To any
}

// User is a user message: a turn the person sent or, when Results is set,
// the harness returning tool results, in which case any text beside them is
// steering added mid-run.
type User struct {
	Pos
	// Index counts message records from 0, in file order.
	Index   int
	Message *transcript.Message
	Results bool
	// Orphans are the tool results in the message that answer no call (no
	// call with their id is waiting for a result), in message order.
	Orphans []transcript.Block
}

// Text returns the message's non-empty text blocks joined with newlines.
func (u *User) Text() string { return transcript.TextOf(u.Message.Content) }

// Images are one line for each image the message attached: its name,
// media type and size (the bytes are in the blob store, not shown).
func (u *User) Images() []string {
	var out []string
	for _, b := range u.Message.Content {
		if b.Type == transcript.BlockImage && b.SHA256 != "" {
			out = append(out, ImageLine(b))
		}
	}
	return out
}

// ImageLine is an image block as one line: [image NAME, TYPE, SIZE].
func ImageLine(b transcript.Block) string {
	return fmt.Sprintf("[image %s, %s, %s]", textfmt.VisibleLine(b.Name), textfmt.VisibleLine(b.MediaType), byteSize(b.Size))
}

// byteSize is n bytes as a person reads it.
func byteSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// Prompt reports whether the message is a turn: the person speaking, not
// the harness returning results.
func (u *User) Prompt() bool { return !u.Results && u.Text() != "" }

// Reply is an assistant message, with its tool calls paired with results.
type Reply struct {
	Pos
	Index   int
	Message *transcript.Message
	// Calls are the message's tool_use blocks in call order.
	Calls []Call
}

// Aside is a message of a role mecha does not write (a "system" message of
// a transcript from another tool): shown as what it is, neither a turn nor
// the model's reply, and paired with nothing.
type Aside struct {
	Pos
	Index   int
	Message *transcript.Message
}

// Call is one tool call and, when one was recorded, its result. A call is
// answered by the first result carrying its id that is written after it
// and before the model's next message (where the harness puts it: parallel
// calls are answered together, in no promised order).
type Call struct {
	// Block is the index of the tool_use block in the message's content.
	Block int
	ID    string
	Name  string
	Input json.RawMessage
	// Result is nil when no result was recorded (the run ended first).
	Result *Result
}

// Result is a recorded tool result.
type Result struct {
	Line    int
	Content string
	IsError bool
	// OutcomeUnknown is true for a result a resume made up because the
	// real one was never recorded: the call may have run.
	OutcomeUnknown bool
}

// legacyNotRun is what builds before transcript.Block.OutcomeUnknown wrote
// for a call a resume found without a result: the same made-up answer,
// which claimed the call had not run.
const legacyNotRun = "not run: the session ended before this call ran"

// Outcome says how a call ended.
type Outcome int

const (
	// Unanswered: no result was recorded.
	Unanswered Outcome = iota
	// Succeeded: the tool ran and returned a result.
	Succeeded
	// Failed: the tool ran, or was tried, and returned an error.
	Failed
	// Denied: the permission gate asked and was told no, or had nobody to
	// ask ("denied by the user", "denied: no terminal ...").
	Denied
	// Refused: the permission gate refused the call without asking
	// (read-only mode, or a mode it does not know: it fails closed).
	Refused
	// Unknown: the result was made up by a resume, the real one never
	// recorded; the call may have run.
	Unknown
	// Interlocked: the trifecta interlock did not run the call, which could
	// have sent data out of a conversation holding private data and
	// untrusted content (its result starts with InterlockPrefix).
	Interlocked
)

// InterlockPrefix starts the result of a call the trifecta interlock did
// not run (tool.RefusalPrefix; a test keeps the two equal).
const InterlockPrefix = "refused: lethal trifecta:"

// Outcome classifies the call by its result. The permission gate answers a
// call it does not run with an error result starting with "denied" (see
// tool.Gate); the run's mode decides whether it was refused or denied.
func (c Call) Outcome() Outcome {
	r := c.Result
	switch {
	case r == nil:
		return Unanswered
	case r.OutcomeUnknown:
		return Unknown
	case !r.IsError:
		return Succeeded
	case strings.HasPrefix(r.Content, InterlockPrefix):
		return Interlocked
	case strings.HasPrefix(r.Content, "denied: ") &&
		(strings.HasSuffix(r.Content, "the run is in read-only mode") || strings.HasPrefix(r.Content, "denied: unknown permission mode")):
		return Refused
	case strings.HasPrefix(r.Content, "denied"):
		return Denied
	}
	return Failed
}

// Checkpoint is a taint record. It covers the messages From to To-1 (by
// Index): those written since the checkpoint before it. Merged is the
// union of every checkpoint so far, the provenance of those messages.
type Checkpoint struct {
	Pos
	Taint    transcript.Taint
	Merged   transcript.Taint
	From, To int
	// Armed is true for the first checkpoint after which the conversation
	// is both private and untrusted: where the trifecta interlock starts
	// to refuse calls that could send data out.
	Armed bool
}

// RunEnd is a summary record, attributed to its provider and model (the
// session's, for summaries that predate those fields) and priced at the
// table's prices.
type RunEnd struct {
	Pos
	Summary         *transcript.Summary
	Provider, Model string
	CostUSD         float64
	Priced          bool
}

// Compacted is a compaction record.
type Compacted struct {
	Pos
	Compaction *transcript.Compaction
}

// Served is a tool_call record: a call an MCP client made to "mecha mcp
// serve" or through "mecha mcp proxy", with its result. A tool_call_start
// that no tool_call answered is one too, at its own line, once the
// session (or the server's run) ends: its Call has no result, and
// NoResult says why.
type Served struct {
	Pos
	Call     *transcript.ToolCall
	NoResult string
}

// Why a call that arrived has no result.
const (
	NoResultServerStopped    = "no result: the server stopped while the call ran"
	NoResultRecordingStopped = "no result recorded: the server's recording stopped"
)

// Other is a record of a kind this build does not know.
type Other struct {
	Pos
	Record *transcript.Unknown
}

// Totals are what is known only once every record has been read.
type Totals struct {
	Messages int
	Prompts  int
	Calls    int
	// Served counts tool_call records: calls made by an MCP client.
	Served int
	// Denied, Refused and Interlocked count calls by Outcome.
	Denied, Refused, Interlocked int
	// Taint is the merge of every checkpoint.
	Taint transcript.Taint
	// Uncovered counts the last messages, with no checkpoint after them:
	// their provenance is unknown, which is never clean.
	Uncovered int
	// Usage and Turns sum the runs, saturating at the largest value of
	// their type (Saturated), which then means "at least".
	Usage transcript.Usage
	Turns int
	Runs  int
	// CostUSD is the cost of every run at the table's prices; Priced is
	// false when any run (or, with none, the session's model) has no price.
	CostUSD float64
	Priced  bool
	Skips   session.Skips
	// Path is the file read.
	Path string
}

// Saturated reports whether a total reached the largest value it can
// hold: the true total is at least that.
func (t *Totals) Saturated() bool { return t.Usage.Saturated() || t.Turns == math.MaxInt }

// builder turns records, fed in file order, into items handed to emit in
// file order. To pair calls with results it holds back a reply with
// unanswered calls, and the items after it, until every call is answered
// or the model's next message arrives: at most one exchange is held. With
// no emit it only pairs and totals, and holds nothing.
type builder struct {
	prices pricing.Table
	emit   func(Item) error // nil: totals only, nothing held
	meta   transcript.Meta
	path   string

	held    []Item
	waiting map[string][]*Call // id -> unanswered calls of the held reply
	open    int                // calls in waiting

	attach   int
	prev     *transcript.Config
	messages int
	covered  int // messages covered by a checkpoint
	merged   transcript.Taint
	summary  bool // any summary seen
	t        Totals
	// arrived are the tool_call_start records no tool_call answered
	// yet, by call number.
	arrived map[int]arrival
}

type arrival struct {
	at    Pos
	start *transcript.ToolCallStart
}

func newBuilder(prices pricing.Table, path string, emit func(Item) error) *builder {
	return &builder{prices: prices, path: path, emit: emit, t: Totals{Priced: true}}
}

func (b *builder) add(line int, rec transcript.Record) error {
	at := Pos{line}
	switch r := rec.(type) {
	case *transcript.Meta:
		b.meta = *r
		return b.out(&Header{Pos: at, Meta: *r, Path: b.path})
	case *transcript.Config:
		b.attach++
		a := &Attach{Pos: at, N: b.attach, Config: r, Prev: b.prev}
		if b.prev != nil && b.emit != nil { // only items show them
			a.Changes = changes(b.prev, r)
		}
		b.prev = r
		return b.out(a)
	case *transcript.Message:
		return b.message(at, r)
	case *transcript.Taint:
		wasArmed := b.merged.Private && b.merged.Untrusted
		b.merged = b.merged.Merge(*r)
		c := &Checkpoint{Pos: at, Taint: *r, Merged: b.merged, From: b.covered, To: b.messages,
			Armed: !wasArmed && b.merged.Private && b.merged.Untrusted}
		b.covered = b.messages
		return b.out(c)
	case *transcript.Summary:
		why := NoResultServerStopped
		if r.StopReason == transcript.StopRecordingStopped {
			why = NoResultRecordingStopped
		}
		if err := b.unanswered(why); err != nil {
			return err
		}
		e := &RunEnd{Pos: at, Summary: r}
		e.Provider, e.Model = Attribute(b.meta, r)
		e.CostUSD, e.Priced = b.prices.Cost(e.Provider, e.Model, r.Usage)
		b.summary = true
		b.t.Runs++
		b.t.Usage = b.t.Usage.Add(r.Usage)
		b.t.Turns = transcript.AddTurns(b.t.Turns, r.Turns)
		b.t.CostUSD += e.CostUSD
		b.t.Priced = b.t.Priced && e.Priced
		return b.out(e)
	case *transcript.Compaction:
		return b.out(&Compacted{Pos: at, Compaction: r})
	case *transcript.ToolCallStart:
		if b.arrived == nil {
			b.arrived = map[int]arrival{}
		}
		b.arrived[r.Call] = arrival{at, r}
		return nil
	case *transcript.ToolCall:
		if r.Call != 0 {
			delete(b.arrived, r.Call)
		}
		b.t.Served++
		return b.out(&Served{Pos: at, Call: r})
	case *transcript.Unknown:
		return b.out(&Other{Pos: at, Record: r})
	}
	return nil
}

func (b *builder) message(at Pos, m *transcript.Message) error {
	index := b.messages
	b.messages++
	if m.Role != transcript.RoleUser && m.Role != transcript.RoleAssistant {
		return b.out(&Aside{Pos: at, Index: index, Message: m})
	}
	if m.Role != transcript.RoleUser {
		// The model's next message: calls still waiting were never answered.
		if err := b.flush(); err != nil {
			return err
		}
		r := &Reply{Pos: at, Index: index, Message: m}
		for i, blk := range m.Content {
			if blk.Type == transcript.BlockToolUse {
				r.Calls = append(r.Calls, Call{Block: i, ID: blk.ID, Name: blk.Name, Input: blk.Input})
			}
		}
		b.t.Calls += len(r.Calls)
		if len(r.Calls) == 0 {
			return b.out(r)
		}
		b.waiting = make(map[string][]*Call, len(r.Calls))
		for i := range r.Calls {
			c := &r.Calls[i]
			b.waiting[c.ID] = append(b.waiting[c.ID], c)
		}
		b.open = len(r.Calls)
		if b.emit == nil {
			return nil
		}
		b.held = append(b.held, r)
		return nil
	}
	u := &User{Pos: at, Index: index, Message: m}
	for _, blk := range m.Content {
		if blk.Type != transcript.BlockToolResult {
			continue
		}
		u.Results = true
		calls := b.waiting[blk.ToolUseID]
		if len(calls) == 0 {
			u.Orphans = append(u.Orphans, blk)
			continue
		}
		c := calls[0]
		b.waiting[blk.ToolUseID] = calls[1:]
		b.open--
		c.Result = &Result{Line: at.N, Content: blk.Content, IsError: blk.IsError,
			OutcomeUnknown: blk.OutcomeUnknown || blk.IsError && blk.Content == legacyNotRun}
		switch c.Outcome() {
		case Denied:
			b.t.Denied++
		case Refused:
			b.t.Refused++
		case Interlocked:
			b.t.Interlocked++
		}
	}
	if u.Prompt() {
		b.t.Prompts++
	}
	if err := b.out(u); err != nil {
		return err
	}
	if len(b.held) > 0 && b.open == 0 {
		return b.flush()
	}
	return nil
}

// out emits an item, or queues it behind a held reply.
func (b *builder) out(it Item) error {
	if b.emit == nil {
		return nil
	}
	if len(b.held) > 0 {
		b.held = append(b.held, it)
		return nil
	}
	return b.emit(it)
}

// flush emits every held item; calls still waiting stay unanswered.
func (b *builder) flush() error {
	held := b.held
	b.held, b.waiting, b.open = nil, nil, 0
	for _, it := range held {
		if err := b.emit(it); err != nil {
			return err
		}
	}
	return nil
}

func (b *builder) finish(sk session.Skips) (*Totals, error) {
	if err := b.unanswered(NoResultServerStopped); err != nil {
		return nil, err
	}
	if err := b.flush(); err != nil {
		return nil, err
	}
	b.t.Messages = b.messages
	b.t.Uncovered = b.messages - b.covered
	b.t.Taint = b.merged
	b.t.Skips = sk
	b.t.Path = b.path
	if !b.summary {
		_, b.t.Priced = b.prices.Lookup(b.meta.Provider, b.meta.Model)
	}
	return &b.t, nil
}

// unanswered emits the calls that arrived and were never answered, in
// the order they arrived, saying why.
func (b *builder) unanswered(why string) error {
	if len(b.arrived) == 0 {
		return nil
	}
	calls := make([]int, 0, len(b.arrived))
	for n := range b.arrived {
		calls = append(calls, n)
	}
	slices.Sort(calls)
	for _, n := range calls {
		a := b.arrived[n]
		s := a.start
		b.t.Served++
		c := &transcript.ToolCall{Call: s.Call, ID: s.ID, Tool: s.Tool, Arguments: s.Arguments, StartedAt: s.StartedAt, At: s.At}
		if err := b.out(&Served{Pos: a.at, Call: c, NoResult: why}); err != nil {
			return err
		}
	}
	clear(b.arrived)
	return nil
}

// Attribute says whose tokens a summary counts: its own provider and model,
// or the session's for summaries that predate those fields.
func Attribute(m transcript.Meta, s *transcript.Summary) (provider, model string) {
	provider, model = s.Provider, s.Model
	if provider == "" {
		provider = m.Provider
	}
	if model == "" {
		model = m.Model
	}
	return provider, model
}
