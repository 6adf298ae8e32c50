package builtin

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutHeadTail(t *testing.T) {
	t.Parallel()
	const s = "aé€😀z" // 1, 2, 3, 4 and 1 bytes
	tests := []struct {
		n          int
		head, tail string
	}{
		{n: 0, head: "", tail: ""},
		{n: 1, head: "a", tail: "z"},
		{n: 2, head: "a", tail: "z"},
		{n: 3, head: "aé", tail: "z"},
		{n: 4, head: "aé", tail: "z"},
		{n: 5, head: "aé", tail: "😀z"},
		{n: 6, head: "aé€", tail: "😀z"},
		{n: 7, head: "aé€", tail: "😀z"},
		{n: 8, head: "aé€", tail: "€😀z"},
		{n: 9, head: "aé€", tail: "€😀z"},
		{n: 10, head: "aé€😀", tail: "é€😀z"},
		{n: 11, head: s, tail: s},
		{n: 99, head: s, tail: s},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.n), func(t *testing.T) {
			t.Parallel()
			if got := string(cutHead([]byte(s), tt.n)); got != tt.head {
				t.Errorf("cutHead(%d) = %q, want %q", tt.n, got, tt.head)
			}
			if got := string(cutTail([]byte(s), tt.n)); got != tt.tail {
				t.Errorf("cutTail(%d) = %q, want %q", tt.n, got, tt.tail)
			}
		})
	}
}

func TestCutMarkerExample(t *testing.T) {
	t.Parallel()
	b := newHeadTail(65536)
	_, _ = b.Write([]byte(strings.Repeat("x", 188992)))
	want := "\n[... 123456 bytes cut: showing the first 32768 and the last 32768 of 188992 ...]\n"
	got := b.String()
	if !strings.Contains(got, want) || len(got) != 65536+len(want) {
		t.Errorf("marker missing or wrong: %q", got[32760:32860])
	}
}

var markerRE = regexp.MustCompile(`\n\[\.\.\. (\d+) bytes cut: showing the first (\d+) and the last (\d+) of (\d+) \.\.\.\]\n`)

// TestHeadTail feeds streams in chunks of many sizes and checks that the
// result is the whole stream when it fits, and otherwise a head and a tail
// of the stream, valid UTF-8, within the limit, with a marker whose numbers
// add up.
func TestHeadTail(t *testing.T) {
	t.Parallel()
	streams := map[string]string{
		"ascii":  strings.Repeat("0123456789", 50),
		"mixed":  strings.Repeat("aé€😀", 40),
		"emoji":  strings.Repeat("😀", 100),
		"short":  "hello",
		"empty":  "",
		"breaks": strings.Repeat("line é\n", 60),
	}
	for name, s := range streams {
		for _, max := range []int{2, 3, 7, 16, 33, 100, 1000} {
			for _, chunk := range []int{1, 3, 7, 64, 1 << 20} {
				t.Run(fmt.Sprintf("%s/max%d/chunk%d", name, max, chunk), func(t *testing.T) {
					t.Parallel()
					b := newHeadTail(max)
					for i := 0; i < len(s); i += chunk {
						n, err := b.Write([]byte(s[i:min(i+chunk, len(s))]))
						if err != nil || n != min(chunk, len(s)-i) {
							t.Fatalf("Write = %d, %v", n, err)
						}
					}
					checkHeadTail(t, s, max, b)
				})
			}
		}
	}
}

func checkHeadTail(t *testing.T, s string, max int, b *headTail) {
	t.Helper()
	got := b.String()
	if b.Len() != len(s) {
		t.Errorf("Len() = %d, want %d", b.Len(), len(s))
	}
	if len(s) <= max {
		if got != s {
			t.Errorf("String() = %q, want the whole stream %q", got, s)
		}
		return
	}
	m := markerRE.FindStringSubmatchIndex(got)
	if m == nil {
		t.Fatalf("no marker in %q", got)
	}
	num := func(i int) int { n, _ := strconv.Atoi(got[m[2*i]:m[2*i+1]]); return n }
	cut, headN, tailN, total := num(1), num(2), num(3), num(4)
	head, tail := got[:m[0]], got[m[1]:]
	if total != len(s) || cut+headN+tailN != total {
		t.Errorf("marker numbers %d+%d+%d do not add up to %d (stream %d)", cut, headN, tailN, total, len(s))
	}
	if len(head) != headN || len(tail) != tailN {
		t.Errorf("marker says %d and %d bytes, shown %d and %d", headN, tailN, len(head), len(tail))
	}
	if !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) {
		t.Errorf("head %q / tail %q are not the stream's", head, tail)
	}
	if headN+tailN > max {
		t.Errorf("shown %d bytes, limit %d", headN+tailN, max)
	}
	// At most a rune's worth is lost to UTF-8 alignment on each side.
	if headN < max/2-(utf8.UTFMax-1) || tailN < max-max/2-(utf8.UTFMax-1) {
		t.Errorf("shown %d+%d bytes, want about %d+%d", headN, tailN, max/2, max-max/2)
	}
	if utf8.ValidString(s) && (!utf8.ValidString(head) || !utf8.ValidString(tail)) {
		t.Errorf("cut inside a UTF-8 sequence: head %q tail %q", head, tail)
	}
}
