package builtin

import (
	"strings"
	"unicode/utf8"
)

// File names on Linux are bytes, anything but "/" and NUL; JSON strings,
// which carry them to and from the model, are UTF-8, and a byte that is
// not UTF-8 would become U+FFFD on the way, naming another file. So the
// file tools write names in a form that survives, and read it back:
//
//   - fs_list writes each byte of a name that is not part of a UTF-8
//     character as \xHH (two lower-case hex digits), and every backslash
//     in a name as \\; a name that is UTF-8 with no backslash is written
//     as it is.
//   - Every path the tools are given is read back the same way: \\ is a
//     backslash, \xHH with HH from 80 to ff is that byte, and any other
//     backslash is itself (so "a\b" still names a\b).
//
// A listed name therefore always leads back to the file it lists, and two
// files never list the same: the file named with the bytes 61 ff lists as
// a\xff, the one named with the six characters a\xff as a\\xff.

// encodeName is a file name (or a relative path) as the file tools show it.
func encodeName(s string) string {
	if utf8.ValidString(s) && !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigit[s[i]>>4])
			b.WriteByte(hexDigit[s[i]&0xf])
		case r == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

const hexDigit = "0123456789abcdef"

// decodeName reads a path given to a file tool back into the bytes of the
// file's name (see encodeName).
func decodeName(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		switch {
		case s[i+1] == '\\':
			b.WriteByte('\\')
			i++
		case s[i+1] == 'x' && i+3 < len(s) && highHex(s[i+2], s[i+3]) >= 0:
			b.WriteByte(byte(highHex(s[i+2], s[i+3])))
			i += 3
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// highHex is the byte two hex digits name when it is 0x80 or more, -1
// otherwise.
func highHex(h, l byte) int {
	v := func(c byte) int {
		switch {
		case c >= '0' && c <= '9':
			return int(c - '0')
		case c >= 'a' && c <= 'f':
			return int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			return int(c-'A') + 10
		}
		return -1
	}
	hi, lo := v(h), v(l)
	if hi < 8 || lo < 0 {
		return -1
	}
	return hi<<4 | lo
}
