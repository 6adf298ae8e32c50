package chatcmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// TestChatSavesARule: a prompt about a command offers to always allow it
// here; [r] runs it and saves the rule for the workspace, and the next
// prompt's same command runs unasked, the rule in its config record.
func TestChatSavesARule(t *testing.T) {
	call := []fakellm.ToolCall{{Name: "shell", Input: input(t, map[string]string{"command": "echo saved-rule-ran"})}}
	c := startChat(t, []fakellm.Turn{
		{ToolCalls: call}, {Text: "First done."},
		{ToolCalls: call}, {Text: "Second done."},
	}, "--trifecta", "off")
	c.enter("run it")
	c.waitFor("[r] always allow shell(echo saved-rule-ran) here")
	c.typed("r")
	c.waitFor("the rule allow shell(echo saved-rule-ran) is saved")
	c.waitFor("First done.")
	c.waitFor("ready · ")
	after := c.seen
	c.prompt("again", "Second done.")
	if c.frames.index(after, "[y] allow once") >= 0 {
		t.Error("the second prompt's command was asked about: the saved rule did not hold")
	}
	c.quit()

	b, err := os.ReadFile(filepath.Join(c.home, "permissions.toml"))
	if err != nil || !strings.Contains(string(b), `allow = ['shell(echo saved-rule-ran)']`) || !strings.Contains(string(b), c.ws) {
		t.Fatalf("permissions.toml: %s, %v", b, err)
	}
	s := c.onlySession()
	cs := s.Configs()
	if len(cs) != 2 || len(cs[0].PermissionRules) != 0 || len(cs[1].PermissionRules) != 1 ||
		cs[1].PermissionRules[0].Rule != "shell(echo saved-rule-ran)" || cs[1].PermissionRules[0].Effect != "allow" {
		t.Fatalf("config records' rules: %+v", cs)
	}
	if got := strings.Count(resultsText(s), "saved-rule-ran"); got != 2 {
		t.Errorf("the command ran %d times; want 2", got)
	}
}

// TestChatDenyWithReason: n, then a sentence and Enter: the call is
// denied and the sentence goes to the model in its result; what the box
// held before n comes back.
func TestChatDenyWithReason(t *testing.T) {
	c := startChat(t, []fakellm.Turn{
		{ToolCalls: []fakellm.ToolCall{{Name: "shell", Input: input(t, map[string]string{"command": "echo nope > nope.txt"})}}},
		{Text: "Understood."},
	}, "--trifecta", "off")
	c.enter("run it")
	c.waitFor("$ echo nope")
	c.typed("draft")
	c.answer("n")
	c.waitFor("type why, for the model")
	c.enter("use the Makefile instead")
	c.waitFor("shell: denied, with your reason")
	c.waitFor("Understood.")
	c.waitFor("│ draft")
	c.quit()
	if got := resultsText(c.onlySession()); !strings.Contains(got, "denied by the user. The user said: use the Makefile instead") {
		t.Errorf("the result sent: %q", got)
	}
	if _, err := os.Stat(filepath.Join(c.ws, "nope.txt")); err == nil {
		t.Error("the denied call ran")
	}
}
