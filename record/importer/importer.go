package importer

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Harnesses whose transcripts can be imported.
const (
	ClaudeCode = "claude-code"
	Codex      = "codex"
)

// MaxSource is the largest source file read.
const MaxSource = 1 << 30

// Conversation is what a source file held, in mecha's terms.
type Conversation struct {
	Harness   string
	Provider  string
	Model     string
	Workspace string
	Title     string
	// CreatedAt is the first timestamp of the source (zero when none).
	CreatedAt time.Time
	// Tools are the (mapped) names of the tools called, in first-call order.
	Tools    []string
	Messages []transcript.Message
	// Usage is what the source recorded; HasUsage is false when nothing.
	Usage    transcript.Usage
	HasUsage bool
	// Turns counts the assistant messages.
	Turns int
	// Approximate are the ids of calls mapped approximately.
	Approximate []string
	// Compactions are where the source's context was compacted, in order.
	Compactions []Compaction
	// Entries counts the source's entries (its non-empty lines); Skipped
	// those not imported, by reason (transcript.Skip*): an entry is either
	// imported or counted there. SkippedLines are the numbers (1-based; at
	// most 20 kept) of the lines not understood.
	Entries      int
	Skipped      map[string]int
	SkippedLines []int
	// Lost counts what the skipped entries held, by reason.
	Lost map[string]Units
	// summaries counts the compaction summaries the source wrote as user
	// entries, which became Compactions.
	summaries int

	// Children are the conversations of the sub-agents the conversation's
	// calls started (Claude Code's sidechains), each joined to its call:
	// CallID is the id of the call that started a child. AgentID is a
	// sub-agent's id in the source, SessionID the source's own id for its
	// session.
	Children  []*Conversation
	CallID    string
	AgentID   string
	SessionID string
	fam       family
	// data is what the conversation was read from, and inFile is set for a
	// child read from its parent's file (whose count takes in its own).
	source string
	data   []byte
	inFile bool
}

// Compaction is a point where the source replaced the context the model
// saw by a summary: Before messages of Messages precede it, and it
// replaces all of them.
type Compaction struct {
	Before  int
	Summary string
	At      time.Time
}

func (c *Conversation) tool(name string) {
	for _, t := range c.Tools {
		if t == name {
			return
		}
	}
	c.Tools = append(c.Tools, name)
}

func (c *Conversation) stamp(t time.Time) {
	if !t.IsZero() && (c.CreatedAt.IsZero() || t.Before(c.CreatedAt)) {
		c.CreatedAt = t.UTC()
	}
}

// Calls counts the tool_use blocks.
func (c *Conversation) Calls() int {
	n := 0
	for _, m := range c.Messages {
		for _, b := range m.Content {
			if b.Type == transcript.BlockToolUse {
				n++
			}
		}
	}
	return n
}

// Parse reads a source file's content as the named harness wrote it.
func Parse(harness string, data []byte) (*Conversation, error) {
	var c *Conversation
	switch harness {
	case ClaudeCode:
		c = ParseClaudeCode(data)
	case Codex:
		c = ParseCodex(data)
	default:
		return nil, fmt.Errorf("import: unknown harness %q (claude-code or codex)", harness)
	}
	c.named(harness)
	return c, nil
}

// named names the harness of a conversation and its children, and their
// titles.
func (c *Conversation) named(harness string) {
	c.Harness, c.Title = harness, title(c.Messages)
	for _, k := range c.Children {
		k.named(harness)
	}
}

// from sets the source of a conversation and of the children read from
// the same file.
func (c *Conversation) from(source string) {
	c.source = source
	for _, k := range c.Children {
		if k.inFile {
			k.from(source)
		}
	}
}

// lines calls f for each non-empty line with its 1-based number.
func lines(data []byte, f func(n int, line []byte)) {
	n := 0
	for len(data) > 0 {
		n++
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if line = bytes.TrimSpace(line); len(line) > 0 {
			f(n, line)
		}
	}
}

// title is the first line of the first user text, clipped.
func title(msgs []transcript.Message) string {
	for _, m := range msgs {
		if m.Role != transcript.RoleUser {
			continue
		}
		if t := strings.TrimSpace(transcript.TextOf(m.Content)); t != "" {
			t, _, _ = strings.Cut(t, "\n")
			if r := []rune(t); len(r) > 80 {
				t = string(r[:79]) + "…"
			}
			return t
		}
	}
	return ""
}

// Result says what became of one source file.
type Result struct {
	Source  string `json:"source"`
	Harness string `json:"harness"`
	// ID is the session's id (the one it would get, with DryRun).
	ID string `json:"id"`
	// Status is "imported", "already imported" or "would import".
	Status   string `json:"status"`
	Messages int    `json:"messages"`
	Calls    int    `json:"calls"`
	// Approximate counts the calls mapped approximately.
	Approximate int `json:"approximate"`
	// Entries counts the source's entries (its non-empty lines); Skipped
	// those not imported, by reason (transcript.Skip*; {} when none was).
	// A child read from its parent's file counts its own entries, which
	// its parent's count takes in too.
	Entries int            `json:"entries"`
	Skipped map[string]int `json:"skipped"`
	// CallID is, for a child, the parent's call that started it.
	CallID string `json:"call_id,omitempty"`
	// Children are the sessions of the sub-agents the calls started, each
	// a child session of this one.
	Children []Result `json:"children,omitempty"`
	// Unjoined are the sub-agent files found beside the source that
	// joined no call of it (nor of its children): not imported.
	Unjoined []string `json:"unjoined,omitempty"`
}

// Statuses of a Result.
const (
	Imported        = "imported"
	AlreadyImported = "already imported"
	WouldImport     = "would import"
)

// ID returns the session id of a source: its first timestamp (the file's
// modification time when it has none) and the first four bytes of a hash
// of the harness, the absolute path and the content.
func ID(harness, abs string, data []byte, created time.Time) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", harness, abs)
	h.Write(data)
	return session.NewID(created, bytes.NewReader(h.Sum(nil)))
}

// File imports the source file at path into the store: it is read whole
// (at most MaxSource bytes), parsed, and written as a new session unless
// one with its id is already there; then each sub-agent conversation it
// started, as a child session (found in the file's sidechain entries, in
// subagents/agent-*.jsonl beside it as Claude Code 2.1 writes them, or in
// agent-*.jsonl of its directory naming its session as earlier versions
// do). dryRun parses and reports, writing nothing.
func File(store *session.Store, harness, path string, dryRun bool) (Result, error) {
	res := Result{Source: path, Harness: harness}
	abs, err := filepath.Abs(path)
	if err != nil {
		return res, err
	}
	res.Source = abs
	data, err := safeopen.ReadFile(abs, MaxSource)
	if err != nil {
		return res, fmt.Errorf("import: %w", err)
	}
	conv, err := Parse(harness, data)
	if err != nil {
		return res, err
	}
	conv.from(abs)
	conv.data = data
	var unjoined []string
	if harness == ClaudeCode {
		unjoined = subagentFiles(abs, conv)
	}
	res, err = put(store, conv, nil, dryRun)
	res.Unjoined = unjoined
	return res, err
}

// put writes a conversation, and its children, as sessions, each unless
// one with its id is already there.
func put(store *session.Store, conv *Conversation, parent *transcript.ParentCall, dryRun bool) (Result, error) {
	res := Result{Source: conv.source, Harness: conv.Harness}
	created := conv.CreatedAt
	if created.IsZero() {
		if fi, err := os.Stat(conv.source); err == nil {
			created = fi.ModTime().UTC()
		}
	}
	var err error
	res.ID, err = ID(conv.Harness, conv.source, conv.data, created)
	if err != nil {
		return res, err
	}
	res.Messages, res.Calls, res.Approximate = len(conv.Messages), conv.Calls(), len(conv.Approximate)
	res.Entries, res.Skipped = conv.Entries, map[string]int{}
	for k, n := range conv.Skipped {
		res.Skipped[k] = n
	}
	if parent != nil {
		res.CallID = parent.CallID
	}
	switch _, err := os.Stat(filepath.Join(store.Dir, res.ID+session.Ext)); {
	case err == nil:
		res.Status = AlreadyImported
	case dryRun:
		res.Status = WouldImport
	default:
		err := Write(store, res.ID, conv.source, created, conv, parent)
		switch {
		case errors.Is(err, os.ErrExist):
			res.Status = AlreadyImported
		case err != nil:
			return res, err
		default:
			res.Status = Imported
		}
	}
	for _, k := range conv.Children {
		kr, err := put(store, k, &transcript.ParentCall{Session: res.ID, CallID: k.CallID}, dryRun)
		res.Children = append(res.Children, kr)
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// Write writes a conversation as the session id of the store. A session
// left half written by a failure is removed, so that a later import can
// make it whole.
// A child names its parent's session and call.
func Write(store *session.Store, id, source string, created time.Time, c *Conversation, parent *transcript.ParentCall) (err error) {
	title := c.Title
	if parent != nil {
		title = "subagent: " + title
	}
	w, err := store.Create(transcript.Meta{ID: id, CreatedAt: created, Provider: c.Provider, Model: c.Model,
		Workspace: c.Workspace, Title: title, Parent: parent,
		ImportedFrom: &transcript.ImportedFrom{Harness: c.Harness, Path: source, Approximate: c.Approximate,
			Entries: c.Entries, Skipped: c.Skipped}})
	if err != nil {
		return err
	}
	defer func() {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(w.Path())
		}
	}()
	cfg, err := configRecord(c)
	if err != nil {
		return err
	}
	recs := []transcript.Record{cfg}
	next := 0 // the next compaction
	for i := range c.Messages {
		for ; next < len(c.Compactions) && c.Compactions[next].Before <= i; next++ {
			recs = append(recs, compaction(c.Compactions[next], i))
		}
		recs = append(recs, &c.Messages[i])
	}
	for ; next < len(c.Compactions); next++ {
		recs = append(recs, compaction(c.Compactions[next], len(c.Messages)))
	}
	// What another harness let in has unknown provenance: armed.
	recs = append(recs, &transcript.Taint{Private: true, Untrusted: true})
	if c.HasUsage || c.Turns > 0 {
		turns := c.Turns // the whole session is this one summary's
		recs = append(recs, &transcript.Summary{Usage: c.Usage, Turns: c.Turns, Provider: c.Provider, Model: c.Model,
			StopReason: "imported", SessionTurns: &turns})
	}
	return w.Append(recs...)
}

// compaction is the record of a compaction of the source, written after
// the first before messages: it replaces them all (what it cost the
// source did not record).
func compaction(c Compaction, before int) *transcript.Compaction {
	return &transcript.Compaction{Replaces: before, Summary: c.Summary, At: c.At.UTC()}
}

// configRecord is what the source knew of the run's configuration; every
// setting it did not record is null.
func configRecord(c *Conversation) (transcript.Record, error) {
	tools := c.Tools
	if tools == nil {
		tools = []string{}
	}
	var buf bytes.Buffer
	buf.WriteString(`{"record":"config"`)
	field := func(k string, v any) error {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		fmt.Fprintf(&buf, ",%q:%s", k, b)
		return nil
	}
	for _, kv := range []struct {
		k string
		v any
	}{{"mecha_version", nil}, {"provider", c.Provider}, {"model", c.Model}, {"workspace", c.Workspace},
		{"system_prompt", nil}, {"tools", tools}, {"effort", nil}, {"temperature", nil}, {"seed", nil},
		{"thinking", nil}, {"cache_prompt", nil}, {"max_tokens", nil}, {"max_turns", nil},
		{"max_output_tokens", nil}, {"max_cost_usd", nil}, {"compact_at_tokens", nil},
		{"compact_keep_recent", nil}, {"permission_mode", nil}, {"trifecta", nil}, {"sandbox", nil},
		{"sandbox_network", nil}} {
		if err := field(kv.k, kv.v); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	return &transcript.Unknown{Record: transcript.KindConfig, Raw: buf.Bytes()}, nil
}

// pair adds a tool_use block to an assistant message under construction.
func toolUse(id, name string, input json.RawMessage) transcript.Block {
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	return transcript.Block{Type: transcript.BlockToolUse, ID: id, Name: name, Input: input}
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
