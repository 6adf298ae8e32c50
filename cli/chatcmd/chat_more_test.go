package chatcmd

import (
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// lastScreen is the screen drawn last.
func (c *chatTest) lastScreen() string {
	c.frames.mu.Lock()
	defer c.frames.mu.Unlock()
	return c.frames.last
}

// TestChatThinkingFolded: an answer's thinking shows folded under it, one
// line saying how long it is; Ctrl-T unfolds it (its text, made visible)
// and folds it again.
func TestChatThinkingFolded(t *testing.T) {
	c := startChat(t, []fakellm.Turn{{Thinking: "I ponder \x1b[31mdeeply\nand long", Text: "The **answer**."}})
	c.enter("think")
	c.waitFor("The answer.")
	c.waitFor("▸ thinking, 2 lines (Ctrl-T shows it)")
	c.waitFor("ready · ")
	if strings.Contains(c.lastScreen(), "ponder") {
		t.Errorf("the thinking shows unfolded:\n%s", c.lastScreen())
	}
	c.send(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	c.waitFor(`┆ I ponder \x1b[31mdeeply`)
	c.send(tea.KeyPressMsg{Code: 't', Mod: tea.ModCtrl})
	c.waitFor("▸ thinking, 2 lines")
	c.quit()
}

// TestChatScrolling: the wheel scrolls the conversation up; output that
// arrives below meanwhile shows a marker instead of moving the view; End
// goes to the end and the marker goes; a chat at its end stays there when
// the window is resized.
func TestChatScrolling(t *testing.T) {
	var long []string
	for i := 1; i <= 80; i++ {
		long = append(long, fmt.Sprintf("row %d of the first answer", i))
	}
	c := startChat(t, []fakellm.Turn{{Text: strings.Join(long, "\n\n")}, {Text: "The second answer."}})
	c.prompt("long", "row 80 of the first answer")
	for range 5 {
		c.send(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	}
	c.settled()
	if strings.Contains(c.lastScreen(), "row 80 of") {
		t.Fatalf("the wheel did not scroll up:\n%s", c.lastScreen())
	}
	c.enter("more")
	c.waitFor("↓ new output below (End goes there)")
	if strings.Contains(c.lastScreen(), "The second answer.") {
		t.Errorf("the view moved to the new output while scrolled up")
	}
	c.waitFor("ready · ")
	c.send(tea.KeyPressMsg{Code: tea.KeyEnd})
	c.waitFor("The second answer.")
	if strings.Contains(c.lastScreen(), "new output below") {
		t.Errorf("the marker stays at the end:\n%s", c.lastScreen())
	}
	c.tm.Send(tea.WindowSizeMsg{Width: 100, Height: 30})
	c.waitFor("The second answer.")
	c.tm.Send(tea.WindowSizeMsg{Width: 120, Height: 20})
	c.waitFor("The second answer.")
	if !strings.Contains(c.lastScreen(), "The second answer.") {
		t.Errorf("not at the end after a resize:\n%s", c.lastScreen())
	}
	c.quit()
}
