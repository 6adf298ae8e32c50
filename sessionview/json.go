package sessionview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"

	"github.com/mecha-agent/mecha/pricing"
	"github.com/mecha-agent/mecha/transcript"
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
// the end of the file.
func WriteJSON(w io.Writer, path string, prices pricing.Table) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	var (
		line, out bytes.Buffer
		n         int
	)
	t, err := totals(path, prices, func(_ int, rec transcript.Record) error {
		if m, ok := rec.(*transcript.Meta); ok { // the header, first
			return writeJSONHead(bw, m, path)
		}
		line.Reset()
		if err := transcript.AppendEncode(&line, rec); err != nil {
			return err
		}
		out.Reset()
		if n == 0 {
			out.WriteString("\n    ")
		} else {
			out.WriteString(",\n    ")
		}
		n++
		// The record sits at depth 2 of the object: indent it as the
		// encoder indents a nested value.
		if err := json.Indent(&out, bytes.TrimSuffix(line.Bytes(), []byte("\n")), "    ", "  "); err != nil {
			return err
		}
		_, err := bw.Write(out.Bytes())
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
	tail := jsonTail{Taint: t.Taint, Usage: t.Usage, Turns: t.Turns, Skipped: t.Skips.Count}
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
	return bw.Flush()
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
	Skipped int              `json:"skipped_lines"`
	Details []skippedJSON    `json:"skipped,omitempty"`
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
