package session

import (
	"errors"
	"fmt"
	"regexp/syntax"
	"syscall"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Span is one line of a transcript: its number (1-based), the offset of
// its first byte and its length without the newline.
type Span struct {
	Line int
	Off  int64
	Len  int
}

// Fragments returns strings every text a match is in holds as it is, so
// that an index can narrow a search to the lines holding them all: the
// literal itself, or the literal runs a regular expression requires (none
// for a case-insensitive one, or one whose every match may be empty of
// them). Never is true when nothing can match.
func (q *Query) Fragments() (frags []string, never bool) {
	if q.never {
		return nil, true
	}
	if q.re == nil {
		return []string{q.literal}, false
	}
	re, err := syntax.Parse(q.re.String(), syntax.Perl)
	if err != nil {
		return nil, false
	}
	return required(re.Simplify()), false
}

// required is the literal runs every match of re holds.
func required(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return nil
		}
		if s := string(re.Rune); utf8.ValidString(s) {
			return []string{s}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min > 0 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var out []string
		for _, sub := range re.Sub {
			out = append(out, required(sub)...)
		}
		return out
	}
	return nil
}

// SearchLines is Store.Search over the given lines of the session r
// names alone (an index's candidates, each line read at its offset): the
// matches they hold, as Search reports them, lines in the order given.
func (s *Store) SearchLines(r Ref, q *Query, lines []Span, fn func(Hit) bool) error {
	if q.never || len(lines) == 0 {
		return nil
	}
	path := r.Path()
	fd, _, err := safeopen.OpenFD(path)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer syscall.Close(fd)
	sr := &searcher{path: path, q: q, fn: fn}
	var buf []byte
	for _, sp := range lines {
		if sp.Len > transcript.MaxLine || sp.Line < 2 {
			continue
		}
		if cap(buf) < sp.Len {
			buf = make([]byte, sp.Len)
		}
		b := buf[:sp.Len]
		if err := preadFull(fd, b, sp.Off); err != nil {
			if errors.Is(err, errShrunk) {
				return nil
			}
			return err
		}
		sr.line = sp.Line
		if err := sr.match(b); errors.Is(err, errStop) {
			return nil
		} else if err != nil {
			return err
		}
	}
	return nil
}

// Text is one text of a record that Search searches: its role (user,
// assistant or tool), its tool for a tool's input or result ("" when a
// result's call is not known: then CallID names it) and the text.
type Text struct {
	Role, Tool, CallID, Text string
}

// Texts calls fn with each text of rec that Search searches. tools maps
// the ids of tool calls seen so far to their tools, and is added to.
func Texts(rec transcript.Record, tools map[string]string, fn func(Text)) {
	switch r := rec.(type) {
	case *transcript.Message:
		for _, b := range r.Content {
			switch b.Type {
			case transcript.BlockText:
				fn(Text{Role: r.Role, Text: b.Text})
			case transcript.BlockThinking:
				fn(Text{Role: r.Role, Text: b.Thinking})
			case transcript.BlockToolUse:
				tools[b.ID] = b.Name
				transcript.StringValues(b.Input, func(v string) { fn(Text{Role: "tool", Tool: b.Name, Text: v}) })
			case transcript.BlockToolResult:
				t := Text{Role: "tool", Text: b.Content}
				if name, ok := tools[b.ToolUseID]; ok {
					t.Tool = name
				} else {
					t.CallID = b.ToolUseID
				}
				fn(t)
			}
		}
	case *transcript.Compaction:
		fn(Text{Role: transcript.RoleAssistant, Text: r.Summary})
	case *transcript.ToolCall:
		transcript.StringValues(r.Arguments, func(v string) { fn(Text{Role: "tool", Tool: r.Tool, Text: v}) })
		transcript.StringValues(r.Content, func(v string) { fn(Text{Role: "tool", Tool: r.Tool, Text: v}) })
	}
}
