package session

import (
	"errors"
	"fmt"
	"io"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/record/transcript"
)

// ErrNotSession means a file's first record is not a meta header: it is not
// a transcript mecha wrote.
var ErrNotSession = errors.New("session: not a session transcript (first line is not a meta record)")

// maxSkippedDetail bounds how many skipped lines are described one by one.
const maxSkippedDetail = 20

// SkippedLine describes one line Load or Scan could not parse.
type SkippedLine struct {
	Line int  // 1-based line number
	Torn bool // the final line, cut short without its newline
	// Oversized: longer than transcript.MaxLine, read past and not parsed.
	Oversized bool
	Err       string // why it did not parse
}

// Session is a transcript read back in full.
type Session struct {
	Path string
	// Meta is the header, its ID the file's (see Identify).
	Meta transcript.Meta
	// HeaderID is the id the header claimed when it was not the file's.
	HeaderID string
	// Records holds every record after the header, in file order, including
	// records of kinds this build does not know.
	Records []transcript.Record
	// Skipped is how many lines could not be parsed; SkippedLines describes
	// the first few of them.
	Skipped      int
	SkippedLines []SkippedLine
}

// Load reads a whole transcript, as Scan reads it. Lines that do not parse
// or are oversized are skipped and counted (a torn final line is the
// normal trace of a killed process); only a file that is not a session (or
// not a regular file, or cannot be read) is an error.
func Load(path string) (*Session, error) {
	f, err := safeopen.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	s, err := readPath(f, path)
	if err != nil {
		return nil, err
	}
	s.Path = path
	return s, nil
}

func read(r io.Reader) (*Session, error) { return readPath(r, "") }

func readPath(r io.Reader, path string) (*Session, error) {
	s := &Session{}
	sk, err := scan(r, path, func(_ int, rec transcript.Record) error {
		if m, ok := rec.(*transcript.Meta); ok { // only the header reaches here
			s.Meta = *m
			return nil
		}
		s.Records = append(s.Records, rec)
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.Skipped, s.SkippedLines, s.HeaderID = sk.Count, sk.Lines, sk.HeaderID
	return s, nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// Messages returns the message records in order.
func (s *Session) Messages() []*transcript.Message {
	var ms []*transcript.Message
	for _, r := range s.Records {
		if m, ok := r.(*transcript.Message); ok {
			ms = append(ms, m)
		}
	}
	return ms
}

// Configs returns the config records in order: one per attach.
func (s *Session) Configs() []*transcript.Config {
	var cs []*transcript.Config
	for _, r := range s.Records {
		if c, ok := r.(*transcript.Config); ok {
			cs = append(cs, c)
		}
	}
	return cs
}

// Summaries returns the summary records in order: one per finished run.
func (s *Session) Summaries() []*transcript.Summary {
	var ss []*transcript.Summary
	for _, r := range s.Records {
		if m, ok := r.(*transcript.Summary); ok {
			ss = append(ss, m)
		}
	}
	return ss
}

// UsageTotals sums the usage and turns of every summary. A transcript that
// died before writing one totals zero: an honest under-count. Sums
// saturate at the largest value of their type (transcript.Usage.Add,
// transcript.AddTurns), which then means "at least".
func (s *Session) UsageTotals() (transcript.Usage, int) {
	var u transcript.Usage
	turns := 0
	for _, m := range s.Summaries() {
		u = u.Add(m.Usage)
		turns = transcript.AddTurns(turns, m.Turns)
	}
	return u, turns
}

// CompactedPrefix introduces the summary that stands in for compacted messages.
const CompactedPrefix = "[Earlier messages of this session were compacted. Summary of them:]\n"

// Context returns the conversation as the model last saw it: every message
// in order, with the latest compaction applied (its summary, as a user
// message, in place of the messages it replaces).
func (s *Session) Context() []transcript.Message {
	var (
		msgs []transcript.Message
		last *transcript.Compaction
	)
	for _, r := range s.Records {
		switch r := r.(type) {
		case *transcript.Message:
			msgs = append(msgs, *r)
		case *transcript.Compaction:
			last = r
		}
	}
	if last == nil || last.Replaces <= 0 {
		return msgs
	}
	n := min(last.Replaces, len(msgs))
	out := make([]transcript.Message, 0, len(msgs)-n+1)
	out = append(out, transcript.Message{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock(CompactedPrefix + last.Summary)}})
	return append(out, msgs[n:]...)
}
