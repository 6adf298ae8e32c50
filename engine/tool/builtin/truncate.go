package builtin

import (
	"fmt"
	"unicode/utf8"
)

// cutHead returns the longest prefix of s[:n] (n <= len(s)) that does not
// end inside a UTF-8 sequence. It looks only at s[:n], so it works on a
// buffer that holds just the first n bytes of a stream.
func cutHead(s []byte, n int) []byte {
	if n >= len(s) {
		n = len(s)
	}
	s = s[:n]
	// Find the start of the last rune, at most utf8.UTFMax-1 bytes back.
	start := len(s)
	for i := 1; i < utf8.UTFMax && len(s)-i >= 0; i++ {
		if utf8.RuneStart(s[len(s)-i]) {
			start = len(s) - i
			break
		}
	}
	if start < len(s) && !utf8.FullRune(s[start:]) {
		return s[:start]
	}
	return s
}

// cutTail returns the longest suffix of s of at most n bytes that does not
// start inside a UTF-8 sequence.
func cutTail(s []byte, n int) []byte {
	if n < len(s) {
		s = s[len(s)-n:]
	}
	for i := 0; i < utf8.UTFMax-1 && len(s) > 0 && !utf8.RuneStart(s[0]); i++ {
		s = s[1:]
	}
	return s
}

// cutMarker is the line put where the middle of an output was removed. The
// three numbers it shows add up to total.
func cutMarker(head, tail, total int) string {
	return fmt.Sprintf("[... %d bytes cut: showing the first %d and the last %d of %d ...]",
		total-head-tail, head, tail, total)
}

// headTail is an io.Writer that keeps the first and the last bytes written
// to it, so that a command printing gigabytes costs a bounded amount of
// memory and still shows how it began and how it ended.
type headTail struct {
	max   int // the head keeps max/2 bytes, the tail the rest
	head  []byte
	ring  []byte // the last bytes after the head; a ring once full
	start int    // index of the oldest byte in ring once it is full
	total int
}

func newHeadTail(max int) *headTail {
	if max < 2 {
		max = 2
	}
	return &headTail{max: max}
}

func (b *headTail) headCap() int { return b.max / 2 }
func (b *headTail) tailCap() int { return b.max - b.max/2 }

func (b *headTail) Write(p []byte) (int, error) {
	n := len(p)
	b.total += n
	if room := b.headCap() - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	tc := b.tailCap()
	if len(p) >= tc {
		b.ring = append(b.ring[:0], p[len(p)-tc:]...)
		b.start = 0
		return n, nil
	}
	for len(p) > 0 {
		if len(b.ring) < tc {
			k := min(tc-len(b.ring), len(p))
			b.ring = append(b.ring, p[:k]...)
			p = p[k:]
			continue
		}
		k := copy(b.ring[b.start:], p)
		p = p[k:]
		b.start = (b.start + k) % tc
	}
	return n, nil
}

// tail returns the bytes kept after the head, oldest first.
func (b *headTail) tail() []byte {
	out := make([]byte, 0, len(b.ring))
	out = append(out, b.ring[b.start:]...)
	return append(out, b.ring[:b.start]...)
}

// Len returns how many bytes were written in all.
func (b *headTail) Len() int { return b.total }

// String returns everything written when it fits in max bytes; otherwise
// the head, a marker saying how much was cut, and the tail, each cut on a
// UTF-8 boundary.
func (b *headTail) String() string {
	tail := b.tail()
	if b.total <= b.max {
		return string(b.head) + string(tail)
	}
	head := cutHead(b.head, len(b.head))
	tail = cutTail(tail, len(tail))
	return string(head) + "\n" + cutMarker(len(head), len(tail), b.total) + "\n" + string(tail)
}

// Cut returns s when it fits in max bytes (DefaultMaxResultBytes when max
// is 0 or less); otherwise its head, a marker saying how much was cut and
// its tail, each cut on a UTF-8 boundary: the way every built-in cuts a
// large result, for tools outside this package to cut theirs alike.
func Cut(s string, max int) string {
	if max <= 0 {
		max = DefaultMaxResultBytes
	}
	if len(s) <= max {
		return s
	}
	b := newHeadTail(max)
	b.Write([]byte(s))
	return b.String()
}
