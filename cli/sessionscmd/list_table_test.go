package sessionscmd

import (
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// cell's one-pass path for plain ASCII gives what the general path gives.
func TestCellAsVisibleLineClip(t *testing.T) {
	parts := []string{"", "a", " ", "  ", "\t", "\n", "\r", "\x1b[31m", "\x7f", "\x00", "é", "\u202e", "\u0085", "…", "title", "x y", "-", "~", "\xff"}
	var inputs []string
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				inputs = append(inputs, a+b+c)
			}
		}
	}
	inputs = append(inputs, strings.Repeat("abc ", 30), strings.Repeat("x", 20), strings.Repeat("x", 21), strings.Repeat("é", 25), "summarize what changed")
	for _, s := range inputs {
		for _, n := range []int{0, 1, 2, 3, 20, 70} {
			want := textfmt.VisibleLine(s)
			if n > 0 {
				want = textfmt.Clip(want, n)
			}
			got, w := cell(s, n)
			if got != want || w != width(want) {
				t.Errorf("cell(%q, %d) = %q, %d; want %q, %d", s, n, got, w, want, width(want))
			}
		}
	}
}
