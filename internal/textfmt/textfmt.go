// Package textfmt shortens text for one-line display: progress lines,
// reports and error messages. It is the one home of these cuts, shared by
// the libraries and the commands.
package textfmt

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// OneLine folds any run of white space, newlines included, into one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip shortens s to at most n runes, marking the cut with "…".
func Clip(s string, n int) string {
	if n < 1 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n-1])) + "…"
}

// JSON shows a JSON value on one line, its keys in the order written,
// clipped to n runes; text that is not JSON is clipped as it is.
func JSON(raw []byte, n int) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return Clip(OneLine(string(raw)), n)
	}
	return Clip(buf.String(), n)
}
