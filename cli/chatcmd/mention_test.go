package chatcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// TestChatMentions: Tab completes an @mention from the workspace's files;
// the file's content goes after the prompt and the conversation is
// private from then on, as after fs_read. A mention that leads out of the
// workspace through a link is refused and nothing is sent (the attack);
// the same file inside the workspace is attached (the control, above).
func TestChatMentions(t *testing.T) {
	c := startChat(t, []fakellm.Turn{{Text: "Summarised."}})
	outside := filepath.Join(t.TempDir(), "secret.txt")
	for p, text := range map[string]string{
		filepath.Join(c.ws, "notes.txt"):  "NOTES-CONTENT line\n",
		filepath.Join(c.ws, "nothing.md"): "x",
		outside:                           "OUTSIDE-SECRET\n",
	} {
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(c.ws, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	c.enter("read @leak.txt")
	c.waitFor("@leak.txt leads outside the workspace")
	c.waitFor("│ read @leak.txt") // the prompt stays in the box
	for range len("read @leak.txt") {
		c.send(tea.KeyPressMsg{Code: tea.KeyBackspace})
	}
	c.typed("summarize @no")
	c.send(tea.KeyPressMsg{Code: tea.KeyTab})
	c.waitFor("notes.txt  nothing.md") // two match: both listed
	c.typed("e")                       // after the common "not"
	c.send(tea.KeyPressMsg{Code: tea.KeyTab})
	c.waitFor("│ summarize @notes.txt")
	c.prompt(" please", "Summarised.")
	c.quit()
	if c.frames.index(0, "ready · private ·") < 0 {
		t.Error("the status line never said private")
	}

	reqs := c.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests; want 1 (the refused prompt sends nothing)", len(reqs))
	}
	body := string(reqs[0].Body)
	if !strings.Contains(body, `summarize @notes.txt please`) || !strings.Contains(body, `\u003cfile path=\"notes.txt\"\u003e\nNOTES-CONTENT line\n\u003c/file\u003e`) &&
		!strings.Contains(body, `<file path=\"notes.txt\">\nNOTES-CONTENT line\n</file>`) {
		t.Errorf("the request does not carry the prompt and the file: %s", body)
	}
	if strings.Contains(body, "OUTSIDE-SECRET") {
		t.Error("the file outside the workspace was sent")
	}
	if s := c.onlySession(); !s.Taint().Private {
		t.Errorf("the session's taint %+v; want private", s.Taint())
	}
}
