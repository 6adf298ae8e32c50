package chatcmd

import (
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// fakeClock is the chat's clock in the tests of input.go's rules: time
// moves only when the test says.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)} }

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// advance moves the chat's clock on by d, between two of its messages:
// one handled across the move would seem to have taken d.
type advance struct {
	clock *fakeClock
	by    time.Duration
	done  chan struct{}
}

// wait moves the chat's clock on by d.
func (c *chatTest) wait(clock *fakeClock, d time.Duration) {
	c.t.Helper()
	done := make(chan struct{})
	c.tm.Send(advance{clock, d, done})
	select {
	case <-done:
	case <-time.After(hangGuard):
		c.t.Fatal("the chat did not take the clock's move")
	}
}

// typeAt types text a key every step, as a person does.
func (c *chatTest) typeAt(clock *fakeClock, step time.Duration, text string) {
	c.t.Helper()
	for _, r := range text {
		c.wait(clock, step)
		c.typed(string(r))
	}
}

// inputBox is what the input box holds once the chat has ended.
func (c *chatTest) inputBox() string {
	c.t.Helper()
	return c.tm.FinalModel(c.t).(*recorder).ta.Value()
}

// noAnswer fails if the prompt was answered.
func noAnswer(t *testing.T, reply chan answer, when string) {
	t.Helper()
	select {
	case a := <-reply:
		t.Fatalf("%s: the prompt was answered (%d)", when, a)
	default:
	}
}

// TestChatPromptRule is input.go's rule for permission prompts, on the
// chat's clock: keys typed ahead, before the prompt is drawn and through
// it, go to the input box; a y pressed before the keyboard has been still
// for promptQuiet is text; a paste, bracketed or not, never answers; the
// control: a y pressed once the choices show answers.
func TestChatPromptRule(t *testing.T) {
	clock := newFakeClock()
	c := startChatAt(t, t.TempDir(), clock.now, nil)
	reply := make(chan answer, 1)
	ask := askMsg{req: tool.Request{Tool: "shell", Input: []byte(`{"command":"rm -rf build"}`)},
		detail: "$ rm -rf build", reply: reply}

	// Typing ahead at a person's pace; the prompt comes 20 ms after a key.
	c.typeAt(clock, 100*time.Millisecond, "also ch")
	c.wait(clock, 20*time.Millisecond)
	c.tm.Send(ask)
	c.waitFor("shell wants to run")
	c.waitFor("keys go to the input box")
	c.typeAt(clock, 100*time.Millisecond, "eck the docs and say why")
	c.waitFor("│ also check the docs and say why")
	noAnswer(t, reply, "typed ahead")

	// Less than promptQuiet after the last key: still text.
	c.wait(clock, 900*time.Millisecond)
	c.tm.Send(readyMsg{})
	c.typed("y")
	c.waitFor("say whyy")
	noAnswer(t, reply, "a y pressed 0.9 s after a key")

	// Still for promptQuiet: the choices show; a paste is still text.
	c.wait(clock, promptQuiet)
	c.tm.Send(readyMsg{})
	c.waitFor("[y] allow once")
	c.send(tea.PasteMsg{Content: "yes"})
	c.settled()
	c.waitFor("whyyyes")
	noAnswer(t, reply, "a bracketed paste")

	// A paste without brackets: keys with no time between them.
	c.wait(clock, promptQuiet)
	c.tm.Send(readyMsg{})
	c.waitFor("[y] allow once")
	c.typed("yes")
	c.waitFor("whyyyesyes")
	time.Sleep(5 * burstGap) // a held key would have settled by now
	noAnswer(t, reply, "a paste without brackets")

	// The control: a y pressed once the choices show answers.
	c.wait(clock, promptQuiet)
	c.tm.Send(readyMsg{})
	c.waitFor("[y] allow once")
	c.wait(clock, 300*time.Millisecond)
	c.typed("y")
	c.waitFor("shell: allowed once")
	select {
	case a := <-reply:
		if a != answerOnce {
			t.Errorf("the control answered %d, want allowed once", a)
		}
	case <-time.After(hangGuard):
		t.Fatal("the control's y did not answer the prompt")
	}
	c.quit()
	if got, want := c.inputBox(), "also check the docs and say whyyyesyes"; got != want {
		t.Errorf("the input box holds %q, want %q", got, want)
	}
}

// TestChatPaste: a bracketed paste goes into the input box whole,
// newlines included (CR and CRLF too), and is sent as one prompt when
// Enter is pressed; without brackets, lines arriving in one burst are one
// prompt too; a paste in a burst ending with a newline is not sent.
func TestChatPaste(t *testing.T) {
	clock := newFakeClock()
	c := startChatAt(t, t.TempDir(), clock.now, []fakellm.Turn{{Text: "Got three lines."}, {Text: "Got two."}})
	c.send(tea.PasteMsg{Content: "line one\r\nline two\rline three"})
	c.settled()
	c.waitFor("│ line three")
	c.wait(clock, time.Second)
	c.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	c.waitFor("Got three lines.")
	c.waitFor("ready · ")

	// Without brackets: "alpha", Enter, "beta", Enter in one instant.
	c.wait(clock, time.Second)
	for _, k := range []tea.KeyPressMsg{{Code: 'a', Text: "alpha"}, {Code: tea.KeyEnter}, {Code: 'b', Text: "beta"}, {Code: tea.KeyEnter}} {
		c.send(k)
	}
	c.settled()
	c.waitFor("│ beta")
	time.Sleep(5 * burstGap) // a held Enter would have sent by now
	c.wait(clock, time.Second)
	c.send(tea.KeyPressMsg{Code: tea.KeyEnter})
	c.waitFor("Got two.")
	c.waitFor("ready · ")
	c.quit()

	var prompts []string
	for _, m := range c.onlySession().Messages() {
		if m.Role == "user" {
			prompts = append(prompts, m.Content[0].Text)
		}
	}
	if want := []string{"line one\nline two\nline three", "alpha\nbeta"}; strings.Join(prompts, "|") != strings.Join(want, "|") {
		t.Errorf("prompts sent %q, want %q", prompts, want)
	}
}
