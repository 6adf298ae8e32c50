package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Query is what Store.Search looks for: a literal or a regular expression, in
// the text a person would search (message text, reflections, tool inputs'
// values and tool results, compaction summaries), never in JSON keys, the
// header or the config.
type Query struct {
	literal string
	re      *regexp.Regexp
	// needle is a run of bytes every line holding a match must contain
	// as they are, before any decoding; nil when there is none and every
	// line must be decoded.
	needle []byte
	// never is set when nothing can match (a literal that is not UTF-8,
	// when every decoded string is).
	never bool
	Role  string // "", "user", "assistant" or "tool"
	Tool  string // "" or a tool's name: only its inputs and results
}

// NewLiteralQuery looks for s as it is, case and all.
func NewLiteralQuery(s string) *Query {
	q := &Query{literal: s}
	if !utf8.ValidString(s) {
		q.never = true
		return q
	}
	q.needle = needleOf(s)
	return q
}

// NewRegexQuery looks for matches of the regular expression expr (Go's
// syntax). Lines are decoded only when they hold the expression's literal
// prefix, when it has one.
func NewRegexQuery(expr string) (*Query, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	q := &Query{re: re}
	if prefix, _ := re.LiteralPrefix(); prefix != "" && utf8.ValidString(prefix) {
		q.needle = needleOf(prefix)
	}
	return q, nil
}

// needleOf returns the longest run of s whose bytes every common JSON
// encoder writes as they are, so that a line whose decoded text holds s
// holds the run verbatim: printable ASCII but for the characters some
// encoders escape (" \ < > & ' /). Text beyond ASCII is left out, since
// encoders such as Python's escape it by default (\u00e9), as are control
// characters. nil when s has no such run: every line is then decoded.
// (A writer that escapes plain letters, \u0041 for A, is not one anybody
// uses; such a line is found only by the text it holds verbatim.)
func needleOf(s string) []byte {
	best, start := "", 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || strings.IndexByte(`"\<>&'/`, c) >= 0 {
			if i-start > len(best) {
				best = s[start:i]
			}
			start = i + 1
		}
	}
	if len(s)-start > len(best) {
		best = s[start:]
	}
	if best == "" {
		return nil
	}
	return []byte(best)
}

// find returns the first match in text, or -1.
func (q *Query) find(text string) (start, end int) {
	if q.re != nil {
		if loc := q.re.FindStringIndex(text); loc != nil {
			return loc[0], loc[1]
		}
		return -1, -1
	}
	if i := strings.Index(text, q.literal); i >= 0 {
		return i, i + len(q.literal)
	}
	return -1, -1
}

// Hit is one match: in one text of one record.
type Hit struct {
	Line int    // the record's line in the transcript, 1-based
	Role string // user, assistant or tool
	Tool string // the tool, for a tool's input or result
	// Part is what the text is: text, thinking, input, result or
	// compaction.
	Part string
	// Text is the whole text the match is in, and Start:End the match.
	Text       string
	Start, End int
}

// errStop ends a search early when fn says so.
var errStop = errors.New("session: search stopped")

// search calls fn with each match in the transcript at path, in file
// order, until fn returns false. The file is read in large chunks into a
// pooled buffer and each chunk is searched for the query's literal with
// bytes.Index (memchr and SIMD), lines being counted with bytes.Count:
// only a line holding the literal is found and decoded. Lines that do not
// decode (a torn last line, a foreign record) are passed over, as are
// lines longer than transcript.MaxLine.
func search(path string, q *Query, fn func(Hit) bool) error {
	if q.never {
		return nil
	}
	fd, st, err := safeopen.OpenFD(path)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer syscall.Close(fd)
	bp := summaryBufs.Get().(*[]byte)
	defer summaryBufs.Put(bp)
	s := &searcher{path: path, q: q, fn: fn, r: &fdReader{fd, path, st.Size}, buf: *bp}
	err = s.run()
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

type searcher struct {
	path  string
	q     *Query
	fn    func(Hit) bool
	r     io.Reader
	buf   []byte
	p, e  int  // buf[p:e] is read and not yet passed over
	eof   bool // r has nothing more
	line  int  // lines before buf[p]
	tools map[string]string
}

// fill moves buf[p:e] to the front and reads after it; when that leaves
// no room, it grows buf (up to a line of transcript.MaxLine) and says
// whether it could.
func (s *searcher) fill() (grown bool, err error) {
	if s.p > 0 {
		s.e = copy(s.buf, s.buf[s.p:s.e])
		s.p = 0
	}
	if s.e == len(s.buf) {
		if len(s.buf) > transcript.MaxLine {
			return false, nil
		}
		s.buf = append(s.buf[:s.e], make([]byte, len(s.buf))...)
	}
	n, err := s.r.Read(s.buf[s.e:])
	s.e += n
	if errors.Is(err, io.EOF) {
		s.eof = true
		err = nil
	}
	return true, err
}

func (s *searcher) run() error {
	needle := s.q.needle
	for {
		win := s.buf[s.p:s.e]
		i := bytes.Index(win, needle)
		if i < 0 || (needle == nil && len(win) == 0) {
			// Pass over every whole line; keep the last partial one.
			last := bytes.LastIndexByte(win, '\n')
			if s.eof {
				return nil
			}
			if last >= 0 {
				s.line += bytes.Count(win[:last+1], newline)
				s.p += last + 1
			}
			if err := s.more(); err != nil {
				return err
			}
			continue
		}
		ls := bytes.LastIndexByte(win[:i], '\n') + 1
		le := bytes.IndexByte(win[i:], '\n')
		if le < 0 && !s.eof {
			// The line goes on past what is read: pass over what comes
			// before it and read on.
			s.line += bytes.Count(win[:ls], newline)
			s.p += ls
			if err := s.more(); err != nil {
				return err
			}
			continue
		}
		s.line += bytes.Count(win[:ls], newline)
		end := len(win)
		if le >= 0 {
			end = i + le
		}
		s.line++
		if err := s.match(win[ls:end]); err != nil {
			return err
		}
		s.p += min(end+1, len(win))
	}
}

var newline = []byte{'\n'}

// more reads on; a line longer than the largest buffer is skipped.
func (s *searcher) more() error {
	grown, err := s.fill()
	if err != nil {
		return fmt.Errorf("session: search %s: %w", s.path, err)
	}
	if grown {
		return nil
	}
	// An oversized line: read past its newline.
	for {
		s.p, s.e = 0, 0
		n, err := s.r.Read(s.buf)
		if errors.Is(err, io.EOF) {
			s.eof = true
		} else if err != nil {
			return fmt.Errorf("session: search %s: %w", s.path, err)
		}
		if j := bytes.IndexByte(s.buf[:n], '\n'); j >= 0 {
			s.line++
			s.p, s.e = j+1, n
			return nil
		}
		if s.eof {
			s.line++
			return nil
		}
	}
}

// match decodes one line that may hold a match and reports its matches.
func (s *searcher) match(line []byte) error {
	if s.line == 1 {
		return nil // the header: its title is shown with every hit
	}
	if _, known := canonicalKind(line); known {
		kind := line[len(recordPrefix)+bytes.IndexByte(line, '{'):]
		if k := string(kind[:bytes.IndexByte(kind, '"')]); k != transcript.KindMessage && k != transcript.KindCompaction && k != transcript.KindToolCall {
			return nil
		}
	}
	rec, err := transcript.Decode(line)
	if err != nil {
		return nil
	}
	switch r := rec.(type) {
	case *transcript.Message:
		return s.message(r)
	case *transcript.Compaction:
		return s.report(Hit{Role: transcript.RoleAssistant, Part: "compaction"}, r.Summary)
	case *transcript.ToolCall:
		if err := s.values(Hit{Role: "tool", Tool: r.Tool, Part: "input"}, r.Arguments); err != nil {
			return err
		}
		return s.values(Hit{Role: "tool", Tool: r.Tool, Part: "result"}, r.Content)
	}
	return nil
}

func (s *searcher) message(m *transcript.Message) error {
	for _, b := range m.Content {
		var err error
		switch b.Type {
		case transcript.BlockText:
			err = s.report(Hit{Role: m.Role, Part: "text"}, b.Text)
		case transcript.BlockThinking:
			err = s.report(Hit{Role: m.Role, Part: "thinking"}, b.Thinking)
		case transcript.BlockToolUse:
			if s.tools == nil {
				s.tools = map[string]string{}
			}
			s.tools[b.ID] = b.Name
			err = s.values(Hit{Role: "tool", Tool: b.Name, Part: "input"}, b.Input)
		case transcript.BlockToolResult:
			err = s.report(Hit{Role: "tool", Tool: s.toolOf(b.ToolUseID), Part: "result"}, b.Content)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// report reports the first match in text, if any and if the filters keep
// it.
func (s *searcher) report(h Hit, text string) error {
	if s.q.Role != "" && h.Role != s.q.Role || s.q.Tool != "" && h.Tool != s.q.Tool {
		return nil
	}
	start, end := s.q.find(text)
	if start < 0 {
		return nil
	}
	h.Line, h.Text, h.Start, h.End = s.line, text, start, end
	if !s.fn(h) {
		return errStop
	}
	return nil
}

// values reports matches in the string values of a JSON document (a
// tool's input or an MCP result), never in its keys.
func (s *searcher) values(h Hit, raw json.RawMessage) error {
	if len(raw) == 0 || s.q.Role != "" && s.q.Role != "tool" || s.q.Tool != "" && h.Tool != s.q.Tool {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var walk func(any) error
	walk = func(v any) error {
		switch v := v.(type) {
		case string:
			return s.report(h, v)
		case []any:
			for _, e := range v {
				if err := walk(e); err != nil {
					return err
				}
			}
		case map[string]any:
			for _, e := range v {
				if err := walk(e); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v)
}

// toolOf names the tool of a call by its id. A call on a line that was
// not decoded (it did not hold the literal) is looked up in the file,
// on the lines that hold its id.
func (s *searcher) toolOf(id string) string {
	if name, ok := s.tools[id]; ok || id == "" {
		return name
	}
	name := lookupTool(s.path, id)
	if s.tools == nil {
		s.tools = map[string]string{}
	}
	s.tools[id] = name
	return name
}

func lookupTool(path, id string) string {
	q := NewLiteralQuery(id)
	name := ""
	fd, st, err := safeopen.OpenFD(path)
	if err != nil {
		return ""
	}
	defer syscall.Close(fd)
	s := &searcher{path: path, q: q, r: &fdReader{fd, path, st.Size}, buf: make([]byte, 64<<10)}
	s.fn = func(Hit) bool { return true }
	s.tools = map[string]string{}
	// Decode each line holding the id; message() records the calls.
	sm := func(line []byte) {
		if rec, err := transcript.Decode(line); err == nil {
			if m, ok := rec.(*transcript.Message); ok {
				for _, b := range m.Content {
					if b.Type == transcript.BlockToolUse && b.ID == id {
						name = b.Name
					}
				}
			}
		}
	}
	_ = s.scanLines(sm, func() bool { return name != "" })
	return name
}

// scanLines calls fn with each line holding the query's needle until done.
func (s *searcher) scanLines(fn func([]byte), done func() bool) error {
	for !done() {
		win := s.buf[s.p:s.e]
		i := bytes.Index(win, s.q.needle)
		if i < 0 || len(win) == 0 {
			if s.eof {
				return nil
			}
			if last := bytes.LastIndexByte(win, '\n'); last >= 0 {
				s.p += last + 1
			}
			if err := s.more(); err != nil {
				return err
			}
			continue
		}
		ls := bytes.LastIndexByte(win[:i], '\n') + 1
		le := bytes.IndexByte(win[i:], '\n')
		if le < 0 && !s.eof {
			s.p += ls
			if err := s.more(); err != nil {
				return err
			}
			continue
		}
		end := len(win)
		if le >= 0 {
			end = i + le
		}
		fn(win[ls:end])
		s.p += min(end+1, len(win))
	}
	return nil
}
