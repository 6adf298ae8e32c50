// Package textfmt formats text for a person: one-line cuts for progress
// lines, reports and error messages, counts and costs, bounded excerpts,
// and terminal emphasis. It is the one home of these, shared by the
// libraries, the renderers and the commands.
package textfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// OneLine folds any run of white space, newlines included, into one space.
func OneLine(s string) string {
	if plainLine(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// plainLine says s is printable ASCII with no space at either end and none
// doubled: OneLine, Visible and VisibleLine return it as it is. Most text
// a listing shows is, and this is one pass where they take one each.
func plainLine(s string) bool {
	if s == "" {
		return true
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return false
	}
	prev := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == ' ' && prev == ' ' {
			return false
		}
		prev = c
	}
	return true
}

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

// Style adds terminal emphasis when On and nothing otherwise.
type Style struct{ On bool }

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
	if n >= 0 && n < 1000 {
		return strconv.Itoa(int(n))
	}
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

// Sum formats a total that saturates at the largest value of its type
// rather than wrapping round (transcript.Usage.Add): that value reads
// "at least N".
func Sum[T ~int | ~uint64](n T) string {
	if n > 0 && n+1 < n { // the largest value: one more wraps round
		return "at least " + Count(n)
	}
	return Count(n)
}

// Plural picks the word for n things.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Dollars formats a cost; costs under a dollar keep four decimals.
func Dollars(usd float64) string {
	if usd != 0 && usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// Bounded returns at most maxLines lines and maxBytes bytes of s, and a
// note of what was left out ("" when nothing was). It finds the lines
// without splitting all of s: a tool result can be megabytes.
func Bounded(s string, maxLines, maxBytes int) (string, string) {
	total := len(s)
	out, cut := s, false
	// s has more than maxLines lines when it has maxLines newlines.
	end, n := 0, 0
	for ; n < maxLines; n++ {
		i := strings.IndexByte(s[end:], '\n')
		if i < 0 {
			break
		}
		end += i + 1
	}
	if n == maxLines {
		out, cut = s[:end-1], true
	}
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
	return out, fmt.Sprintf("… %s more bytes, %s more lines", Count(total-len(out)), Count(restLines))
}
