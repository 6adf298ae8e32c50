package cmdkit

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// NewStyle returns the style of output to e.Out.
func NewStyle(e *Env) textfmt.Style { return textfmt.Style{On: e.Color()} }

// WriteJSON writes v as indented JSON, without HTML escaping, with DEL,
// C1 controls and bidi formatting written as \u escapes (textfmt.JSONWriter;
// encoding/json already escapes the C0 controls): the same JSON for a
// program, inert on a terminal.
func WriteJSON(w io.Writer, v any) error { return writeJSON(w, v, "  ") }

// WriteJSONLine writes v as WriteJSON does, on one line: for output of
// one object per line.
func WriteJSONLine(w io.Writer, v any) error { return writeJSON(w, v, "") }

func writeJSON(w io.Writer, v any, indent string) error {
	jw := textfmt.JSONWriter(w)
	enc := json.NewEncoder(jw)
	enc.SetIndent("", indent)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return jw.Close()
}

// Table lays out rows in columns, left-aligned except the columns listed
// in Right, which are right-aligned (numbers). Widths count runes.
type Table struct {
	Right map[int]bool
	rows  [][]string
}

// Add appends a row; the first row is the heading.
func (t *Table) Add(cells ...string) { t.rows = append(t.rows, cells) }

// Write writes the table, its heading in bold.
func (t *Table) Write(w io.Writer, st textfmt.Style) error {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	for n, r := range t.rows {
		var b strings.Builder
		for i, c := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if i > 0 {
				b.WriteString("  ")
			}
			if t.Right[i] {
				b.WriteString(pad + c)
			} else if i < len(r)-1 {
				b.WriteString(c + pad)
			} else {
				b.WriteString(c)
			}
		}
		line := b.String()
		if n == 0 {
			line = st.Bold(line)
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
