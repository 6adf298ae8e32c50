package sessionview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// WriteJSON writes the session at path as one indented JSON object, as it
// reads the file: id, path, meta, every record after the header (re-encoded
// as this build writes it), then the merged taint, usage, turns, cost at
// prices (null when some run has no price) and the lines skipped:
//
//	{"id": ..., "path": ..., "meta": {...}, "records": [...],
//	 "taint": {...}, "usage": {...}, "turns": 3, "cost_usd": 0.0341,
//	 "skipped_lines": 1, "skipped": [{"line": 12, "torn": false, "error": "..."}]}
//
// Each record is written as soon as it is read; only the totals wait for
// the end of the file. Children, when given, are the session's child
// sessions ("children": [{"session", "call_id"}], after the totals).
//
// DEL, C1 controls and bidi overrides in strings are written as \u
// escapes (textfmt.JSONWriter): the same JSON, inert on a terminal.
func WriteJSON(w io.Writer, path string, prices pricing.Table, children ...Child) error {
	jw := textfmt.JSONWriter(w)
	bw := bufio.NewWriterSize(jw, 256<<10)
	var (
		line bytes.Buffer
		buf  []byte
		n    int
	)
	t, err := totals(path, prices, func(_ int, rec transcript.Record) error {
		if m, ok := rec.(*transcript.Meta); ok { // the header, first
			return writeJSONHead(bw, m, path)
		}
		line.Reset()
		if err := transcript.AppendEncode(&line, rec); err != nil {
			return err
		}
		sep := ",\n    "
		if n == 0 {
			sep = "\n    "
		}
		n++
		// The record sits at depth 2 of the object: indent it as the
		// encoder indents a nested value.
		buf = appendIndented(append(buf[:0], sep...), bytes.TrimSuffix(line.Bytes(), []byte("\n")), "    ")
		_, err := bw.Write(buf)
		return err
	})
	if err != nil {
		return err
	}
	if n == 0 {
		bw.WriteString("]")
	} else {
		bw.WriteString("\n  ]")
	}
	tail := jsonTail{Taint: t.Taint, Usage: t.Usage, Turns: t.Turns, Saturated: t.Saturated(), Skipped: t.Skips.Count, Children: children}
	if t.Skips.HeaderID != "" {
		tail.Note = session.ForeignIDNote(path, t.Skips.HeaderID)
	}
	if t.Priced {
		tail.CostUSD = &t.CostUSD
	}
	for _, sk := range t.Skips.Lines {
		tail.Details = append(tail.Details, skippedJSON{sk.Line, sk.Torn, sk.Err})
	}
	b, err := indented(tail)
	if err != nil {
		return err
	}
	bw.WriteString(",")
	bw.Write(b[1:]) // without its opening brace: it continues the object
	if err := bw.Flush(); err != nil {
		return err
	}
	return jw.Close()
}

type jsonHead struct {
	ID   string          `json:"id"`
	Path string          `json:"path"`
	Meta transcript.Meta `json:"meta"`
}

type jsonTail struct {
	Taint   transcript.Taint `json:"taint"`
	Usage   transcript.Usage `json:"usage"`
	Turns   int              `json:"turns"`
	CostUSD *float64         `json:"cost_usd"`
	// Saturated says a total reached the largest value it can hold, so
	// the true total is at least that.
	Saturated bool          `json:"saturated,omitempty"`
	Skipped   int           `json:"skipped_lines"`
	Details   []skippedJSON `json:"skipped,omitempty"`
	// Note says the header claimed another id than its file's.
	Note string `json:"note,omitempty"`
	// Children are the child sessions (subagents' runs) of this one.
	Children []Child `json:"children,omitempty"`
}

type skippedJSON struct {
	Line  int    `json:"line"`
	Torn  bool   `json:"torn"`
	Error string `json:"error"`
}

// writeJSONHead opens the object: its fields up to the records' "[".
func writeJSONHead(w *bufio.Writer, m *transcript.Meta, path string) error {
	b, err := indented(jsonHead{ID: m.ID, Path: path, Meta: *m})
	if err != nil {
		return err
	}
	w.Write(bytes.TrimSuffix(b, []byte("\n}\n"))) // left open for the records
	_, err = w.WriteString(",\n  \"records\": [")
	return err
}

// indented encodes v as the command always has: two-space indent, no HTML
// escaping, a final newline.
func indented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// appendIndented appends src, one value of compact JSON as encoding/json
// writes it, indented as json.Indent(dst, src, prefix, "  ") would indent
// it. It copies strings whole, finding their ends with bytes.IndexByte, so
// a record of long tool results is indented at the speed of memchr rather
// than through the JSON scanner byte by byte. src must be valid compact
// JSON: it is not checked (transcript.AppendEncode's output is).
func appendIndented(dst, src []byte, prefix string) []byte {
	depth, open := 0, false
	newline := func() {
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, "  "...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			// The first element of a non-empty object or array.
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			end := stringEnd(src, i)
			dst = append(dst, src[i:end]...)
			i = end - 1
		case '{', '[':
			open = true // an empty one stays {} or []
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, ':', ' ')
		case '}', ']':
			if open {
				open = false
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// stringEnd returns the index just after the string literal that starts
// at src[i]: after the first quote not escaped by an odd run of
// backslashes.
func stringEnd(src []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(src[j:], '"')
		if k < 0 {
			return len(src)
		}
		j += k
		n := 0
		for b := j - 1; b > i && src[b] == '\\'; b-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}
