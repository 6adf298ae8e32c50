package chatcmd

import (
	"fmt"
	"os"
	"path/filepath"
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

// TestChatNotifies: with [chat] notify = "osc9" a run's end and a
// permission question each send a desktop notification while the window
// is not focused, with the chat's own text only: an answer and a tool
// name that carry their own OSC 9 never reach the terminal raw. Once the
// terminal reports focus, nothing is sent.
func TestChatNotifies(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("[chat]\nnotify = \"osc9\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startChatIn(t, home, []fakellm.Turn{
		{Text: "done \x1b]9;pwned by the model\x07"},
		{ToolCalls: []fakellm.ToolCall{{Name: "shell", Input: input(t, map[string]string{"command": "echo '\x1b]9;pwned by the tool\x07'"})}}},
		{Text: "ran it"},
		{Text: "quiet"},
	}, "--trifecta", "off")
	c.prompt("one", "done")
	c.enter("two")
	c.answer("y")
	c.waitFor("ran it")
	c.waitFor("ready · ")
	c.tm.Send(tea.FocusMsg{})
	c.prompt("three", "quiet")
	c.quit()
	screen := string(c.screen)
	if strings.Contains(screen, "\x1b]9;pwned") {
		t.Errorf("a model's or a tool's OSC 9 reached the terminal")
	}
	if n := strings.Count(screen, "\x1b]9;mecha: the run ended\x07"); n != 2 {
		t.Errorf("%d run-end notifications, want 2 (none once focused)", n)
	}
	if n := strings.Count(screen, "\x1b]9;mecha: a permission question waits\x07"); n != 1 {
		t.Errorf("%d question notifications, want 1", n)
	}
	if n := strings.Count(screen, "\x1b]9;"); n != 3 {
		t.Errorf("%d OSC 9 sequences in all, want 3", n)
	}
}

// TestNotification: each mode's sequence; the text keeps nothing that
// could end or extend it.
func TestNotification(t *testing.T) {
	for mode, want := range map[string]string{
		"": "\a", "bell": "\a", "off": "",
		"osc9":   "\x1b]9;mecha: hi there\x07",
		"osc777": "\x1b]777;notify;mecha;mecha: hi there\x07",
	} {
		if got := notification(mode, "mecha: hi\x07\x1b; there"); got != want {
			t.Errorf("%q: %q, want %q", mode, got, want)
		}
	}
}

// TestChatInputGrows: the input box grows with its text, line by line,
// up to a third of the window, then scrolls.
func TestChatInputGrows(t *testing.T) {
	for _, tc := range []struct{ lines, height int }{{2, 3}, {6, 6}, {40, 16}} {
		c := startChat(t, nil)
		var text []string
		for i := 1; i <= tc.lines; i++ {
			text = append(text, fmt.Sprintf("line %d", i))
		}
		c.send(tea.PasteMsg{Content: strings.Join(text, "\n")})
		c.settled()
		c.waitFor(fmt.Sprintf("│ line %d", tc.lines))
		c.quit()
		ta := c.tm.FinalModel(t).(*recorder).ta
		if ta.Height() != tc.height || ta.LineCount() != tc.lines {
			t.Errorf("%d lines: the box is %d high holding %d lines, want %d high", tc.lines, ta.Height(), ta.LineCount(), tc.height)
		}
	}
}
