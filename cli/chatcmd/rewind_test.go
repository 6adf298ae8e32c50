package chatcmd

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	"github.com/mecha-agent/mecha/testkit/fakellm"
)

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// TestChatRewind: /rewind lists the prompts; /rewind 2 puts the file the
// second prompt's write changed back to the bytes the first left (hashes
// compared), names the shell call it cannot undo, and the chat goes on in
// a new session forked from before prompt 2.
func TestChatRewind(t *testing.T) {
	content := "first\x00version\r\nwith odd bytes \xff\n"
	c := startChat(t, []fakellm.Turn{
		{ToolCalls: []fakellm.ToolCall{{Name: "fs_write", Input: input(t, map[string]string{"path": "a.txt", "content": "v1\n"})}}},
		{Text: "One."},
		{ToolCalls: []fakellm.ToolCall{
			{Name: "fs_write", Input: input(t, map[string]string{"path": "a.txt", "content": "v2\n"})},
			{Name: "shell", Input: input(t, map[string]string{"command": "touch shelled.txt"})},
		}},
		{Text: "Two."},
		{Text: "After the rewind."},
	}, "--yes", "--trifecta", "off")
	path := filepath.Join(c.ws, "a.txt")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	c.prompt("write one", "One.")
	afterOne := fileSum(t, path)
	c.prompt("write two", "Two.")
	first := c.eng.current()
	c.enter("/rewind")
	c.waitFor("2  write two")
	c.enter("/rewind 2")
	c.waitFor("restored a.txt")
	c.waitFor("shell: touch shelled.txt")
	if got := fileSum(t, path); got != afterOne {
		t.Errorf("a.txt after /rewind 2: sha256 %x; want %x, as prompt 1 left it", got, afterOne)
	}
	c.prompt("go on", "After the rewind.")
	fork := c.eng.current()
	c.enter("/rewind 1")
	c.waitFor("rewound to before prompt 1 of " + fork.ID)
	c.quit()
	if got, want := fileSum(t, path), sha256.Sum256([]byte(content)); got != want {
		t.Errorf("a.txt after /rewind 1: sha256 %x; want the original's %x", got, want)
	}
	if fork == first {
		t.Fatal("the chat did not move to a new session")
	}
	s, err := c.store().Load(fork)
	if err != nil {
		t.Fatal(err)
	}
	if s.Meta.ForkOf == nil || s.Meta.ForkOf.Session != first.ID || s.Meta.ForkOf.Turn != 2 {
		t.Errorf("the fork's meta: %+v", s.Meta.ForkOf)
	}
	if msgs := s.Messages(); len(msgs) < 4 || msgs[0].Content[0].Text != "write one" {
		t.Errorf("the fork's conversation: %d messages", len(msgs))
	}
	for _, m := range s.Messages() {
		for _, b := range m.Content {
			if b.Text == "write two" {
				t.Error("the fork holds the prompt it was rewound to before")
			}
		}
	}
}
