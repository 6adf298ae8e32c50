package sessionview

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/transcript"
)

// The helpers below are the ones internal/cli formats with; the text
// renderer's output must match the command's byte for byte.

// style adds terminal emphasis when colour is on and nothing otherwise.
type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string { return s.wrap("1", t) }
func (s style) dim(t string) string  { return s.wrap("2", t) }
func (s style) red(t string) string  { return s.wrap("31", t) }

// count formats an integer with thousands separators.
func count[T ~int | ~uint64 | ~int64](n T) string {
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

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// dollars formats a cost; costs under a dollar keep four decimals.
func dollars(usd float64) string {
	if usd != 0 && usd < 1 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

// oneLine folds s onto one line with single spaces.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ")), " ")
}

// bounded returns at most maxLines lines and maxBytes bytes of s, and a
// note of what was left out ("" when nothing was).
func bounded(s string, maxLines, maxBytes int) (string, string) {
	total := len(s)
	out, cut := s, false
	// The first maxLines lines, found without splitting all of s: a tool
	// result can be megabytes. s has more lines than that when it has at
	// least maxLines newlines.
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
	return out, fmt.Sprintf("… %s more bytes, %s more lines (--full shows all)", count(total-len(out)), count(restLines))
}

func atSuffix(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "  " + t.UTC().Format("15:04:05")
}

func compactJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	b, _ := json.Marshal(v)
	s, _ := bounded(string(b), 1, 300)
	return s
}

func showValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "—"
	case string:
		if v == "" {
			return `""`
		}
		return v
	case []any:
		var s []string
		for _, e := range v {
			s = append(s, showValue(e))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	return fmt.Sprint(v)
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func taintWords(t transcript.Taint) string {
	switch {
	case t.Private && t.Untrusted:
		return "private, untrusted"
	case t.Private:
		return "private"
	case t.Untrusted:
		return "untrusted"
	}
	return "clean"
}
