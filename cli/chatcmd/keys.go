package chatcmd

import (
	"fmt"
	"os"
	"os/exec"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// The input box's own keys beyond typing: the history (Up, Down, Ctrl-R),
// $EDITOR (Ctrl-G) and leaving (Ctrl-D on an empty box).

// rsearch is a Ctrl-R search in progress: what was typed, the entry found
// and its index, and what the box held before.
type rsearch struct {
	query, found string
	at           int
	before       string
}

// historyKey handles Up and Down: on the box's first (last) row they
// bring back the previous (next) prompt; elsewhere they move the cursor.
func (m *model) historyKey(k string) bool {
	switch {
	case k == "up" && m.ta.Line() == 0 && m.ta.LineInfo().RowOffset == 0:
		if s, ok := m.hist.older(m.ta.Value()); ok {
			m.setInput(s)
			m.ta.MoveToBegin()
		}
		return true
	case k == "down" && m.ta.Line() == m.ta.LineCount()-1 && m.ta.LineInfo().RowOffset == m.ta.LineInfo().Height-1:
		if s, ok := m.hist.newer(); ok {
			m.setInput(s)
		}
		return true
	}
	return false
}

// setInput replaces what the input box holds, the cursor at its end.
func (m *model) setInput(s string) {
	m.ta.SetValue(s)
	m.ta.MoveToEnd()
	m.layout()
}

// searchKey handles a key while a Ctrl-R search is on: typing narrows it,
// Ctrl-R again finds an older match, Enter (or an arrow) takes the match
// into the box to edit, Esc and Ctrl-G give the box back as it was.
func (m *model) searchKey(k tea.KeyPressMsg) tea.Cmd {
	s := m.search
	switch k.String() {
	case "ctrl+r":
		if found, at := m.hist.search(s.query, s.at); at >= 0 {
			s.found, s.at = found, at
		}
	case "esc", "ctrl+g", "ctrl+c":
		m.setInput(s.before)
		m.search = nil
	case "backspace":
		if r := []rune(s.query); len(r) > 0 {
			s.query = string(r[:len(r)-1])
			s.found, s.at = m.hist.search(s.query, len(m.hist.entries))
		}
	case "enter", "up", "down", "left", "right", "tab":
		if s.at >= 0 {
			m.setInput(s.found)
		} else {
			m.setInput(s.before)
		}
		m.search = nil
	default:
		if k.Text != "" {
			s.query += k.Text
			s.found, s.at = m.hist.search(s.query, len(m.hist.entries))
		}
	}
	m.layout()
	m.refresh()
	return nil
}

// searchView is the line the search shows above the input box.
func (m *model) searchView() string {
	if m.search == nil {
		return ""
	}
	found := "(no match)"
	if m.search.at >= 0 {
		found = textfmt.Clip(textfmt.OneLine(m.search.found), max(m.width-30-len(m.search.query), 10))
	}
	return m.st.dim.Render("history search (Ctrl-R older, Enter takes, Esc cancels): ") +
		textfmt.Visible(m.search.query) + " → " + textfmt.Visible(found)
}

// startSearch begins a Ctrl-R search with an empty query (the newest entry).
func (m *model) startSearch() {
	found, at := m.hist.search("", len(m.hist.entries))
	m.search = &rsearch{found: found, at: at, before: m.ta.Value()}
	m.layout()
	m.refresh()
}

// editorDoneMsg is the end of $EDITOR on the input box's text.
type editorDoneMsg struct {
	path string
	err  error
}

// editor opens the input box's text in $VISUAL, else $EDITOR, else vi,
// the chat's screen handed over until it ends; what it saved replaces the
// box's text (not sent: Enter sends).
func (m *model) editor() tea.Cmd {
	f, err := os.CreateTemp("", "mecha-prompt-*.md")
	if err != nil {
		m.note("the editor: " + textfmt.Visible(err.Error()))
		return nil
	}
	_, err = f.WriteString(m.ta.Value())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		m.note("the editor: " + textfmt.Visible(err.Error()))
		return nil
	}
	words := strings.Fields(m.editorCommand())
	c := exec.Command(words[0], append(words[1:], f.Name())...)
	c.Env = m.eng.env.Environ.List()
	path := f.Name()
	return tea.ExecProcess(c, func(err error) tea.Msg { return editorDoneMsg{path, err} })
}

// editorCommand is the editor Ctrl-G runs.
func (m *model) editorCommand() string {
	for _, v := range []string{"VISUAL", "EDITOR"} {
		if e := strings.TrimSpace(m.eng.env.Vars.Get(v)); e != "" {
			return e
		}
	}
	return "vi"
}

// editorDone takes the text the editor saved.
func (m *model) editorDone(msg editorDoneMsg) {
	defer os.Remove(msg.path)
	if msg.err != nil {
		m.note(fmt.Sprintf("the editor (%s) failed: %s; the input box is as it was", textfmt.Visible(m.editorCommand()), textfmt.Visible(textfmt.OneLine(msg.err.Error()))))
		return
	}
	b, err := safeopen.ReadFile(msg.path, 4<<20)
	if err != nil {
		m.note("the editor: " + textfmt.Visible(err.Error()) + "; the input box is as it was")
		return
	}
	m.setInput(strings.TrimRight(normalizeNewlines(string(b)), "\n"))
}
