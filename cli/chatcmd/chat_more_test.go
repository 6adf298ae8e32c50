package chatcmd

import (
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
