package chatcmd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	"github.com/aymanbagabas/go-udiff"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// answer is a person's answer to a permission prompt.
type answer int

const (
	answerDeny answer = iota
	answerOnce
	answerAlways // this tool, for the rest of the session
	answerRule   // a saved rule for calls like this one in this workspace
)

// askMsg puts a call to the person; the answer goes back on reply.
type askMsg struct {
	req    tool.Request
	detail string // what the call would do: a diff, a command, the arguments
	// rule is the allow rule [r] would save for calls like this one in
	// this workspace ("shell(go test ./...)"), "" when none can be written.
	rule  string
	reply chan answer
	// reason carries, before a denial on reply, what the person said to
	// the model about it ("" for nothing).
	reason chan string
	// trust, when set, makes this the question about the workspace the
	// chat opened in (that directory): y trusts it, n goes on untrusted.
	// It is answered by the same rules as a permission prompt.
	trust string
}

// asker is the chat's tool.Asker: the gate's and the interlock's
// questions become prompts on the screen, answered inline.
type asker struct {
	send func(tea.Msg)

	// save writes an allow rule for a workspace
	// ($MECHA_HOME/permissions.toml, harness.SaveAllowRule).
	save func(workspace, rule string) error

	mu        sync.Mutex
	always    map[string]bool
	rules     map[string]bool // rules saved from this chat's prompts
	workspace string
}

func (a *asker) setWorkspace(ws string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.workspace = ws
}

// reset forgets the tools allowed for the session (a new or another one).
func (a *asker) reset() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.always = nil
}

// Confirm asks the person (see Answer).
func (a *asker) Confirm(ctx context.Context, req tool.Request) (bool, error) {
	ans, err := a.Answer(ctx, req)
	return ans.Allow, err
}

// Answer asks the person, unless the tool was allowed for the session. An
// interlock's question (req.Reason set) is always asked: allowing a tool
// once it could send private data out is a decision about this call. A
// denial carries what the person then wrote for the model, if anything.
func (a *asker) Answer(ctx context.Context, req tool.Request) (tool.Answer, error) {
	a.mu.Lock()
	ok, ws := a.always[req.Tool], a.workspace
	a.mu.Unlock()
	if ok && req.Reason == "" {
		return tool.Answer{Allow: true}, nil
	}
	var rule string
	if req.Reason == "" && a.save != nil {
		rule, _ = tool.SuggestRule(req.Tool, req.Input, ws)
	}
	a.mu.Lock()
	saved := a.rules[rule]
	a.mu.Unlock()
	if saved {
		return tool.Answer{Allow: true}, nil // saved from an earlier prompt of this run
	}
	reply, reason := make(chan answer, 1), make(chan string, 1)
	a.send(askMsg{req: req, detail: describeCall(ws, req), rule: rule, reply: reply, reason: reason})
	select {
	case ans := <-reply:
		if ans == answerDeny {
			var why string
			select {
			case why = <-reason:
			default:
			}
			return tool.Answer{Reason: why}, nil
		}
		if ans == answerRule {
			if err := a.save(ws, rule); err != nil {
				return tool.Answer{}, fmt.Errorf("saving the rule %s: %w", rule, err)
			}
			a.mu.Lock()
			if a.rules == nil {
				a.rules = map[string]bool{}
			}
			a.rules[rule] = true
			a.mu.Unlock()
		}
		if ans == answerAlways {
			a.mu.Lock()
			if a.always == nil {
				a.always = map[string]bool{}
			}
			a.always[req.Tool] = true
			a.mu.Unlock()
		}
		return tool.Answer{Allow: true}, nil
	case <-ctx.Done():
		return tool.Answer{}, ctx.Err()
	}
}

// withNewline ends s in a newline: an edit's strings are fragments of a
// file, and their last lines are not the file's last.
func withNewline(s string) string {
	if s == "" || strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// maxDetailLines bounds what a prompt shows of a call.
const maxDetailLines = 60

// describeCall says what a call would do, for a person to judge: a write
// or an edit as a diff, a command as its text, anything else as its
// arguments. Everything is made visible (no control characters).
func describeCall(workspace string, req tool.Request) string {
	var in map[string]any
	_ = json.Unmarshal(req.Input, &in)
	str := func(k string) (string, bool) { s, ok := in[k].(string); return s, ok }
	path, _ := str("path")
	var out string
	switch req.Tool {
	case "fs_write":
		content, _ := str("content")
		out = unifiedDiff(path, readCurrent(workspace, path), content)
	case "fs_edit":
		old, _ := str("old_string")
		repl, _ := str("new_string")
		out = unifiedDiff(path, withNewline(old), withNewline(repl))
	case "shell":
		cmd, _ := str("command")
		out = "$ " + cmd
	default:
		out = textfmt.JSON(req.Input, 4000)
	}
	text, more := textfmt.Bounded(textfmt.Visible(out), maxDetailLines, 16<<10)
	if more != "" {
		text += "\n" + more
	}
	return text
}

// readCurrent is the file a write would replace ("" when there is none),
// read inside the workspace only.
func readCurrent(workspace, path string) string {
	if workspace == "" || path == "" {
		return ""
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return ""
	}
	defer root.Close()
	b, err := root.ReadFile(path)
	if err != nil || len(b) > 1<<20 {
		return ""
	}
	return string(b)
}

// unifiedDiff is the diff -u of a file's two texts; a text that does not
// end in a newline is marked so ("\ No newline at end of file").
func unifiedDiff(path, from, to string) string {
	d := udiff.Unified("a/"+path, "b/"+path, from, to)
	if d == "" {
		return fmt.Sprintf("%s: no change", path)
	}
	return strings.TrimRight(d, "\n")
}
