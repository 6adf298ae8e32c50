package transcript

import (
	"encoding/json"
	"errors"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Messages are most of a transcript's bytes, and tool results most of a
// message's. Decoding a message through Block.UnmarshalJSON would make
// encoding/json scan every result four or five times; decodeMessage does it
// in one typed pass, unquoting result strings itself (the line has already
// been validated by then), and only falls back to capturing raw blocks when
// a block of an unknown type needs to be kept verbatim.

type messageWire[C ~string] struct {
	Role       string         `json:"role"`
	Content    []blockWire[C] `json:"content"`
	StopReason string         `json:"stop_reason"`
	At         time.Time      `json:"at"`
}

// blockWire is every known block's fields. C is string on the fast path;
// resultContent when some tool result's content is not a string.
type blockWire[C ~string] struct {
	Type           *string         `json:"type"`
	Text           string          `json:"text"`
	Citations      json.RawMessage `json:"citations"`
	ID             string          `json:"id"`
	Name           string          `json:"name"`
	Input          json.RawMessage `json:"input"`
	ToolUseID      string          `json:"tool_use_id"`
	Content        C               `json:"content"`
	IsError        bool            `json:"is_error"`
	Thinking       string          `json:"thinking"`
	Signature      string          `json:"signature"`
	OutcomeUnknown bool            `json:"outcome_unknown"`
	FileChanges    []FileChange    `json:"file_changes"`
	MediaType      string          `json:"media_type"`
	SHA256         string          `json:"sha256"`
	Size           int64           `json:"size"`
}

// block maps the decoded fields to a Block. known is false for a type this
// build does not know: the caller must then keep the block's raw text.
func (b blockWire[C]) block() (out Block, known bool, err error) {
	if b.Type == nil || *b.Type == "" {
		return Block{}, false, errors.New("transcript: content block has no type")
	}
	out = Block{Type: *b.Type}
	switch out.Type {
	case BlockText:
		out.Text = b.Text
		if len(b.Citations) > 0 && string(b.Citations) != "null" {
			out.Citations = b.Citations
		}
	case BlockToolUse:
		out.ID, out.Name, out.Input = b.ID, b.Name, b.Input
		if len(out.Input) == 0 || string(out.Input) == "null" {
			out.Input = emptyObject
		}
	case BlockToolResult:
		out.ToolUseID, out.IsError, out.OutcomeUnknown, out.FileChanges = b.ToolUseID, b.IsError, b.OutcomeUnknown, b.FileChanges
		out.Content = string(b.Content)
	case BlockThinking:
		out.Thinking, out.Signature = b.Thinking, b.Signature
	case BlockImage:
		if b.SHA256 == "" || b.MediaType == "" {
			// An image block of another shape (an API's base64 source):
			// kept verbatim.
			return out, false, nil
		}
		out.Name, out.MediaType, out.SHA256, out.Size = b.Name, b.MediaType, b.SHA256, b.Size
	default:
		return out, false, nil
	}
	return out, true, nil
}

// resultContent is a tool result's content, read as text.
type resultContent string

func (c *resultContent) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && data[0] == '"' {
		s, ok := unquote(data)
		if !ok {
			return errors.New("transcript: malformed string")
		}
		*c = resultContent(s)
		return nil
	}
	s, err := resultText(data)
	*c = resultContent(s)
	return err
}

func decodeMessage(line []byte) (*Message, error) {
	var w messageWire[string]
	err := json.Unmarshal(line, &w)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// A tool result whose content is an array, as other tools write it.
		var slow messageWire[resultContent]
		if err := json.Unmarshal(line, &slow); err != nil {
			return nil, err
		}
		return buildMessage(line, slow)
	}
	if err != nil {
		return nil, err
	}
	return buildMessage(line, w)
}

func buildMessage[C ~string](line []byte, w messageWire[C]) (*Message, error) {
	if w.Role == "" {
		return nil, errors.New("message record has no role")
	}
	m := &Message{Role: w.Role, StopReason: w.StopReason, At: w.At, Content: make([]Block, len(w.Content))}
	var unknown []int
	for i, b := range w.Content {
		out, known, err := b.block()
		if err != nil {
			return nil, err
		}
		if !known {
			unknown = append(unknown, i)
		}
		m.Content[i] = out
	}
	if len(unknown) > 0 {
		var raw struct {
			Content []json.RawMessage `json:"content"`
		}
		if err := json.Unmarshal(line, &raw); err != nil {
			return nil, err
		}
		for _, i := range unknown {
			m.Content[i].Raw = raw.Content[i]
		}
	}
	return m, nil
}

// unquote decodes a JSON string literal that encoding/json has already
// validated. It reports false on anything it does not expect rather than
// guessing.
func unquote(q []byte) (string, bool) {
	if len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
		return "", false
	}
	s := q[1 : len(q)-1]
	i := 0
	for i < len(s) && s[i] != '\\' && s[i] != '"' && s[i] >= ' ' && s[i] < utf8.RuneSelf {
		i++
	}
	if i == len(s) {
		return string(s), true
	}
	b := make([]byte, i, len(s))
	copy(b, s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch s[i+1] {
			case '"', '\\', '/':
				b = append(b, s[i+1])
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s[i+2:])
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					if i+1 < len(s) && s[i] == '\\' && s[i+1] == 'u' {
						if r2, ok := hex4(s[i+2:]); ok {
							if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
								b = utf8.AppendRune(b, dec)
								i += 6
								continue
							}
						}
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c == '"' || c < ' ':
			return "", false
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			// Invalid UTF-8 becomes U+FFFD, as encoding/json does.
			r, size := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
		}
	}
	return string(b), true
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
