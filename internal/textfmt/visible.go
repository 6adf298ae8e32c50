package textfmt

import (
	"encoding/binary"
	"io"
	"strings"
	"unicode/utf8"
)

// Visible makes text from a transcript, a tool or a file name safe to write
// to a terminal: every character a terminal would act on rather than show
// is written as an escape a person can read. C0 controls (but newline and
// tab, and a carriage return right before a newline) and DEL become \xHH,
// so an escape sequence's ESC reads \x1b and the rest of it stays inert
// text; C1 controls (U+0080–U+009F, which some terminals treat as CSI and
// OSC) and the bidirectional overrides and isolates (U+202A–U+202E,
// U+2066–U+2069, and the marks U+200E, U+200F, U+061C), which reorder
// what is shown, become \uHHHH; a byte that is not UTF-8 becomes \xHH.
// Everything else, backslashes included, is left as it is. Text with
// nothing to escape is returned without copying.
func Visible(s string) string {
	i := firstUnsafe(s)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			if safeASCII(c) || (c == '\r' && i+1 < len(s) && s[i+1] == '\n') {
				b.WriteByte(c)
			} else {
				writeHex(&b, `\x`, uint32(c), 2)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			writeHex(&b, `\x`, uint32(c), 2)
		case invisibleRune(r):
			writeHex(&b, `\u`, uint32(r), 4)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// VisibleLine is Visible text on one line: white space folded (OneLine)
// after the escaping, so that no control character is folded away unseen.
func VisibleLine(s string) string {
	if plainLine(s) {
		return s
	}
	return OneLine(Visible(s))
}

// firstUnsafe returns the index of the first byte Visible may have to
// change, len(s) when there is none.
func firstUnsafe(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < utf8.RuneSelf {
			if !safeASCII(c) {
				return i
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || invisibleRune(r) {
			return i
		}
		i += size - 1
	}
	return len(s)
}

func safeASCII(c byte) bool { return (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' }

// invisibleRune reports the characters above ASCII that a terminal acts
// on or that reorder text: C1 controls and bidirectional formatting.
func invisibleRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

func writeHex(b *strings.Builder, prefix string, v uint32, digits int) {
	b.WriteString(prefix)
	for d := digits - 1; d >= 0; d-- {
		b.WriteByte(hexDigits[(v>>(4*d))&0xf])
	}
}

// VisibleWriter returns a writer that passes text on as Visible makes it,
// for output streamed to a terminal (a document written as it is read).
// Writes may split a character or a CR LF: what is cut waits for the
// next write, and Close passes on what is still held (escaped as Visible
// escapes it alone: a lone CR, a character cut short).
func VisibleWriter(w io.Writer) io.WriteCloser { return &visibleWriter{w: w} }

type visibleWriter struct {
	w    io.Writer
	held []byte
}

func (v *visibleWriter) Write(p []byte) (int, error) {
	src := p
	if len(v.held) > 0 {
		src = append(v.held, p...)
	}
	cut := len(src)
	for i := len(src) - 1; i >= 0 && i >= len(src)-utf8.UTFMax; i-- {
		if utf8.RuneStart(src[i]) {
			if !utf8.FullRune(src[i:]) {
				cut = i
			}
			break
		}
	}
	if cut == len(src) && cut > 0 && src[cut-1] == '\r' {
		cut-- // raw only before a newline, which may come next
	}
	out := Visible(string(src[:cut]))
	v.held = append([]byte(nil), src[cut:]...)
	if _, err := io.WriteString(v.w, out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Close passes on what is held; it does not close the writer underneath.
func (v *visibleWriter) Close() error {
	if len(v.held) == 0 {
		return nil
	}
	_, err := io.WriteString(v.w, Visible(string(v.held)))
	v.held = nil
	return err
}

// JSONWriter returns a writer that passes JSON text on with DEL, the C1
// controls and the bidirectional formatting characters of Visible written
// as \u escapes. encoding/json leaves those raw; in valid JSON they can
// only be inside strings, where the escape means the same character, so
// the JSON is unchanged for a program and inert on a terminal. Writes may
// split a character: its first bytes wait for the next write, and Close
// (or a write that ends whole) passes them on.
func JSONWriter(w io.Writer) io.WriteCloser { return &jsonWriter{w: w} }

type jsonWriter struct {
	w    io.Writer
	held []byte
	buf  []byte
}

func (j *jsonWriter) Write(p []byte) (int, error) {
	src := p
	if len(j.held) > 0 {
		src = append(j.held, p...)
		j.held = nil
	}
	// Hold back a character cut at the end of this write.
	cut := len(src)
	for i := len(src) - 1; i >= 0 && i >= len(src)-utf8.UTFMax; i-- {
		if utf8.RuneStart(src[i]) {
			if !utf8.FullRune(src[i:]) {
				cut = i
			}
			break
		}
	}
	j.held = append(j.held, src[cut:]...)
	out := src[:cut]
	if plainASCII(out) < len(out) {
		j.buf = appendJSONVisible(j.buf[:0], out)
		out = j.buf
	}
	if _, err := j.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// plainASCII returns the length of the run of b's first bytes below DEL
// (0x7f), which appendJSONVisible leaves as they are; eight at a time.
func plainASCII(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A byte at 0x7f or above sets its top bit in w or in w plus one
		// in each byte (no carry crosses bytes below 0x7f).
		if ((w+0x0101010101010101)|w)&0x8080808080808080 != 0 {
			break
		}
	}
	for ; i < len(b) && b[i] < 0x7f; i++ {
	}
	return i
}

// Close passes on what is held; it does not close the writer underneath.
func (j *jsonWriter) Close() error {
	if len(j.held) == 0 {
		return nil
	}
	_, err := j.w.Write(j.held)
	j.held = nil
	return err
}

func appendJSONVisible(dst, src []byte) []byte {
	start := 0
	for i := 0; i < len(src); {
		if n := plainASCII(src[i:]); n > 0 {
			i += n
			continue
		}
		c := src[i]
		if c < utf8.RuneSelf {
			if c == 0x7f {
				dst = append(append(dst, src[start:i]...), `\u007f`...)
				start = i + 1
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if invisibleRune(r) {
			dst = append(dst, src[start:i]...)
			dst = append(dst, `\u`...)
			for d := 3; d >= 0; d-- {
				dst = append(dst, hexDigits[(r>>(4*d))&0xf])
			}
			start = i + size
		}
		i += size
	}
	return append(dst, src[start:]...)
}
