package chat

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// visible makes control characters and escape sequences in text from a
// transcript, a model or a tool visible (ESC as \x1b, a C1 control as
// \u009b, invalid UTF-8 bytes as \xff), so that nothing shown can move the
// cursor, retitle the window or write to the clipboard. Newlines and tabs
// stay. (A local stand-in until internal/textfmt has a shared one.)
func visible(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r < 0x80 && needsEscape(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case needsEscape(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func needsEscape(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r == utf8.RuneError:
		return true
	case r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069):
		return true // line separators and bidirectional overrides
	}
	return false
}
