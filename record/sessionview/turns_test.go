package sessionview

import (
	"math"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

func TestTurnRange(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		opts     TextOptions
		n        int
		from, to int
	}{
		{TextOptions{}, 5, 0, math.MaxInt},
		{TextOptions{Turn: 2}, 5, 2, 2},
		{TextOptions{Turn: 5}, 5, 5, 5},
		{TextOptions{Last: 2}, 5, 4, math.MaxInt},
		{TextOptions{Last: 9}, 5, 1, math.MaxInt},
		{TextOptions{}, 0, 0, math.MaxInt},
	} {
		from, to, err := tc.opts.turnRange(tc.n)
		if err != nil || from != tc.from || to != tc.to {
			t.Errorf("%+v of %d: %d..%d, %v; want %d..%d", tc.opts, tc.n, from, to, err, tc.from, tc.to)
		}
	}
	for _, bad := range []struct {
		opts TextOptions
		n    int
	}{{TextOptions{Turn: 6}, 5}, {TextOptions{Turn: 1}, 0}} {
		if _, _, err := bad.opts.turnRange(bad.n); err == nil {
			t.Errorf("%+v of %d: no error", bad.opts, bad.n)
		}
	}
}

// TestTurnCounter: a prompt and the replies that answer tool results are
// one turn each; steering, an attach or a new prompt after a reply opens
// the next; results alone do not.
func TestTurnCounter(t *testing.T) {
	t.Parallel()
	prompt := &User{Message: msg("user", "do it")}
	results := &User{Results: true, Message: msg("user", "")}
	steer := &User{Results: true, Message: msg("user", "also this")}
	reply := &Reply{Message: msg("assistant", "ok")}
	var c turnCounter
	for i, step := range []struct {
		it   Item
		want int
	}{
		{&Header{}, 0}, {&Attach{}, 1}, {prompt, 1}, {reply, 1}, {results, 1}, {reply, 2},
		{steer, 3}, {reply, 3}, {&Checkpoint{}, 3}, {&RunEnd{}, 3}, {&Attach{}, 4}, {prompt, 4}, {reply, 4}, {prompt, 5},
	} {
		if got := c.next(step.it); got != step.want {
			t.Fatalf("step %d (%T): turn %d, want %d", i, step.it, got, step.want)
		}
	}
}

func msg(role, text string) *transcript.Message {
	m := &transcript.Message{Role: role}
	if text != "" {
		m.Content = []transcript.Block{transcript.TextBlock(text)}
	}
	return m
}
