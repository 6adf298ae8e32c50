package cmdutil

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Style adds terminal emphasis when colour is allowed and nothing otherwise.
type Style struct{ On bool }

// NewStyle returns the style of output to e.Out.
func NewStyle(e *Env) Style { return Style{On: e.Color()} }

func (s Style) wrap(code, text string) string {
	if !s.On || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

// Bold, Dim and Red emphasise text.
func (s Style) Bold(t string) string { return s.wrap("1", t) }
func (s Style) Dim(t string) string  { return s.wrap("2", t) }
func (s Style) Red(t string) string  { return s.wrap("31", t) }

// Count formats an integer with thousands separators.
func Count[T ~int | ~uint64 | ~int64](n T) string {
	s := strconv.FormatUint(uint64(max(n, 0)), 10)
	if n < 0 {
		s = strconv.FormatInt(int64(n), 10)
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 && c != '-' && s[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// Dollars formats a cost; costs under a dollar keep four decimals.
func Dollars(usd float64) string {
	if usd != 0 && usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Plural picks the word for n things.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Bounded returns at most maxLines lines and maxBytes bytes of s, and a
// note of what was left out ("" when nothing was).
func Bounded(s string, maxLines, maxBytes int) (string, string) {
	total := len(s)
	lines := strings.Split(s, "\n")
	cut := false
	if len(lines) > maxLines {
		lines, cut = lines[:maxLines], true
	}
	out := strings.Join(lines, "\n")
	if len(out) > maxBytes {
		out, cut = out[:maxBytes], true
		// Do not leave half a character at the cut.
		for i := 0; i < 3; i++ {
			if r, size := utf8.DecodeLastRuneInString(out); r != utf8.RuneError || size != 1 {
				break
			}
			out = out[:len(out)-1]
		}
	}
	if !cut {
		return s, ""
	}
	restLines := strings.Count(s[len(out):], "\n")
	return out, fmt.Sprintf("… %s more bytes, %s more lines (--full shows all)", Count(total-len(out)), Count(restLines))
}

// WriteJSON writes v as indented JSON, without HTML escaping.
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
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
func (t *Table) Write(w io.Writer, st Style) error {
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
