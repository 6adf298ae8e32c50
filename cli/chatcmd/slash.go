package chatcmd

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/attach"
	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/cli/scriptcmd"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

const slashHelp = `/resume [ID]  switch to session ID (an id, a prefix or last); alone, list this workspace's sessions
/new, /clear  start a new session with the next prompt: nothing of this one is carried
/compact [INSTRUCTIONS]  replace the conversation before the last answer with a summary
              the model writes (following INSTRUCTIONS), recorded as a compaction
/model NAME   use model NAME from the next prompt on (alone: say which)
/rewind [N]   put back the files the file tools changed since prompt N and continue from
              before it, in a new session (alone: list the prompts)
/cost         tokens and cost of this session so far
/replay       replay this session so far against the current model, and report
/script       write the script that redoes this session's tool calls, and say where
/help         this list
@FILE attaches a workspace file's content to the prompt (Tab completes it).
Enter sends; Alt-Enter, Shift-Enter or Ctrl-J starts a new line; a paste stays in the box
until Enter; text sent while tools run steers them (it goes beside their results); a
permission prompt takes y, n (then a reason for the model and Enter), a or r (a rule
saved for this workspace) once it shows them (a second after it appears with no
key pressed; before that, keys go to the box); Esc interrupts a run; PgUp/PgDn scroll;
Ctrl-C twice quits.`

// slash runs a slash command.
func (m *model) slash(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help":
		m.note(slashHelp)
	case "/cost":
		m.note(m.cost())
	case "/model":
		m.model(arg)
	case "/new", "/clear", "/resume", "/replay", "/script", "/compact", "/rewind":
		if m.running {
			m.note(name + " waits for the run to end (Esc interrupts it)")
			break
		}
		return m.sessionCommand(name, arg)
	default:
		m.note(fmt.Sprintf("unknown command %s; /help lists the commands", textfmt.Visible(textfmt.Clip(name, 40))))
	}
	m.refresh()
	return nil
}

func (m *model) note(text string) { m.add(entry{kind: kNote, text: text}) }

// sessionCommand runs the commands that need no run in progress.
func (m *model) sessionCommand(name, arg string) tea.Cmd {
	cur := m.eng.current()
	switch name {
	case "/rewind":
		m.rewind(arg)
	case "/compact":
		if cur.IsZero() {
			m.note("nothing to compact yet: send a prompt first")
			break
		}
		m.note("compacting the conversation…")
		m.running = true
		m.status.run = transcript.Usage{}
		m.eng.startCompact(arg)
	case "/new", "/clear":
		if _, err := m.eng.switchTo(session.Ref{}); err != nil {
			m.add(entry{kind: kError, text: textfmt.Visible(err.Error())})
			break
		}
		m.entries, m.calls = nil, map[string]int{}
		m.status = status{provider: m.status.provider, model: m.status.model}
		m.note("new session: it is recorded with the first prompt")
	case "/resume":
		m.resume(arg)
	case "/replay", "/script":
		if cur.IsZero() {
			m.note("nothing is recorded yet: send a prompt first")
			break
		}
		m.note(name[1:] + " of " + cur.ID + "…")
		m.refresh()
		return m.background(name, cur.ID)
	}
	m.refresh()
	return nil
}

// rewind goes back to before a prompt of the session (or lists them).
func (m *model) rewind(arg string) {
	cur := m.eng.current()
	if cur.IsZero() {
		m.note("nothing is recorded yet: send a prompt first")
		return
	}
	s := m.eng.door.Resumed()
	if arg == "" {
		if s == nil {
			m.note("nothing is recorded yet: send a prompt first")
			return
		}
		var b strings.Builder
		b.WriteString("prompts of this session (/rewind N goes back to before prompt N):")
		for _, t := range harness.Turns(s) {
			fmt.Fprintf(&b, "\n%4d  %s", t.N, textfmt.Visible(textfmt.Clip(textfmt.OneLine(t.Text), 90)))
		}
		m.note(b.String())
		return
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		m.note("/rewind N: N is a prompt's number (/rewind alone lists them)")
		return
	}
	r, fork, err := m.eng.rewind(n)
	if err != nil {
		m.add(entry{kind: kError, text: textfmt.Visible(textfmt.OneLine(err.Error()))})
		return
	}
	m.showSession(fork)
	var b strings.Builder
	fmt.Fprintf(&b, "rewound to before prompt %d of %s: this is %s, forked from it", n, cur.ID, r.Session.ID)
	for _, p := range r.Restored {
		fmt.Fprintf(&b, "\nrestored %s", textfmt.Visible(p))
	}
	for _, p := range r.Removed {
		fmt.Fprintf(&b, "\nremoved %s (created since)", textfmt.Visible(p))
	}
	if len(r.NotUndone) > 0 {
		fmt.Fprintf(&b, "\nnot undone (their effects stay):")
		for _, c := range r.NotUndone {
			fmt.Fprintf(&b, "\n  %s", c)
		}
	}
	m.note(b.String())
}

// rewind lets go of the session, rewinds it to before prompt n, and
// takes the fork; on failure it takes the session back.
func (e *engine) rewind(n int) (*harness.Rewound, *session.Session, error) {
	cur := e.current()
	if _, err := e.switchTo(session.Ref{}); err != nil {
		return nil, nil, err
	}
	r, err := harness.Rewind(attach.World(e.env), cur, n, "")
	if err != nil {
		if _, berr := e.switchTo(cur); berr != nil {
			err = fmt.Errorf("%w; and taking the session back: %v", err, berr)
		}
		return nil, nil, err
	}
	s, err := e.switchTo(r.Session)
	return r, s, err
}

// model changes the model of the next prompts' attaches.
func (m *model) model(name string) {
	if name == "" {
		m.note(fmt.Sprintf("model: %s/%s", textfmt.Visible(m.status.provider), textfmt.Visible(m.status.model)))
		return
	}
	m.eng.setModel(name)
	m.status.model = name
	m.note("model: " + textfmt.Visible(name) + " from the next prompt on")
}

// cost says the session's usage and cost so far.
func (m *model) cost() string {
	u, cost := m.status.totals(m.eng.door.Config().Prices)
	if cost == "—" {
		cost += " (no price for it in mecha's table or config.toml)"
	}
	return fmt.Sprintf("tokens: %s in, %s out, %s cache read, %s cache write\ncost: %s",
		textfmt.Count(u.InputTokens), textfmt.Count(u.OutputTokens), textfmt.Count(u.CacheReadTokens),
		textfmt.Count(u.CacheWriteTokens), cost)
}

// resume switches to another session, or lists this workspace's.
func (m *model) resume(arg string) {
	if arg == "" {
		m.note(m.eng.listSessions())
		return
	}
	ref, err := m.eng.env.ResolveSession(arg)
	if cur := m.eng.current(); err == nil && !cur.IsZero() && ref == cur {
		m.note("this chat is in that session already")
		return
	}
	var s *session.Session
	if err == nil {
		s, err = m.eng.switchTo(ref)
	}
	if err != nil {
		m.add(entry{kind: kError, text: textfmt.Visible(textfmt.OneLine(err.Error()))})
		return
	}
	m.showSession(s)
}

// showSession replaces the conversation with a session's.
func (m *model) showSession(s *session.Session) {
	m.entries, m.calls, m.streaming = nil, map[string]int{}, -1
	m.status = status{id: s.Meta.ID, provider: s.Meta.Provider, model: s.Meta.Model}
	if cs := s.Configs(); len(cs) > 0 {
		m.status.provider, m.status.model = cs[len(cs)-1].Provider, cs[len(cs)-1].Model
	}
	if m.eng.isGiven("model") {
		m.status.model = m.eng.settings().Model
	}
	m.status.fromSession(m.eng.door.Config().Prices, s.Summaries())
	m.status.taint = s.Taint()
	for _, msg := range s.Messages() {
		m.replayMessage(msg)
	}
	m.note(fmt.Sprintf("resumed %s: %s", textfmt.Visible(s.Meta.ID), textfmt.Visible(textfmt.Clip(textfmt.OneLine(s.Meta.Title), 80))))
}

// replayMessage shows a recorded message as the chat showed it live.
func (m *model) replayMessage(msg *transcript.Message) {
	switch msg.Role {
	case "assistant":
		m.message(msg)
		for i := range msg.Content {
			if b := &msg.Content[i]; b.Type == transcript.BlockToolUse {
				m.calls[b.ID] = m.add(entry{kind: kTool, call: b, took: -1})
			}
		}
	case "user":
		for _, b := range msg.Content {
			if b.Type != transcript.BlockToolResult {
				continue
			}
			if i, ok := m.calls[b.ToolUseID]; ok {
				e := &m.entries[i]
				e.done, e.failed, e.size = true, b.IsError, len(b.Content)
				if b.IsError {
					e.text = textfmt.Clip(textfmt.OneLine(b.Content), 100)
				}
			}
		}
		if !hasResults(msg) {
			for _, b := range msg.Content {
				if b.Type == transcript.BlockText {
					m.add(entry{kind: kUser, text: textfmt.Visible(b.Text)})
				}
			}
		}
		m.message(msg)
	}
}

func hasResults(msg *transcript.Message) bool {
	for _, b := range msg.Content {
		if b.Type == transcript.BlockToolResult {
			return true
		}
	}
	return false
}

// background runs "mecha replay" or "mecha script" on the session, their
// output shown in the conversation when they are done.
func (m *model) background(name, id string) tea.Cmd {
	env := *m.eng.env
	var out bytes.Buffer
	env.Out, env.Err, env.OutTTY, env.InTTY = &out, &out, false, false
	var cmd *cobra.Command
	args := []string{id}
	if name == "/replay" {
		cmd = replaycmd.NewCmdReplay(&env, nil)
		args = append(args, "-p", m.status.provider, "-m", m.status.model)
		if script := m.eng.settings().MockScript; script != "" {
			args = append(args, "--mock-script", script)
		}
	} else {
		cmd = scriptcmd.NewCmdScript(&env, nil)
	}
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	ctx := m.eng.base
	return func() tea.Msg {
		err := cmd.ExecuteContext(ctx)
		text := strings.TrimRight(textfmt.Visible(out.String()), "\n")
		if err != nil {
			text = strings.TrimLeft(text+"\n"+name[1:]+": "+textfmt.Visible(textfmt.OneLine(err.Error())), "\n")
		}
		return slashDoneMsg{text: text}
	}
}

// listSessions lists the newest sessions of the chat's workspace.
func (e *engine) listSessions() string {
	ws, err := workdir.Dir(e.settings().Workspace)
	if err != nil {
		return err.Error()
	}
	store, err := e.env.Store()
	if err != nil {
		return err.Error()
	}
	l, err := store.List()
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	n := 0
	for _, s := range l.Sessions {
		if s.Meta.Workspace != ws || n == 10 {
			continue
		}
		n++
		fmt.Fprintf(&b, "%s  %s\n", textfmt.Visible(s.Meta.ID), textfmt.Visible(textfmt.Clip(textfmt.OneLine(s.Meta.Title), 70)))
	}
	if n == 0 {
		return "no sessions of " + textfmt.Visible(ws) + " yet"
	}
	return "sessions of " + textfmt.Visible(ws) + " (/resume ID):\n" + strings.TrimRight(b.String(), "\n")
}

// setModel makes name the model of the next attaches.
func (e *engine) setModel(name string) {
	e.mu.Lock()
	e.overrides["model"] = true
	e.mu.Unlock()
	e.door.Update(func(s *harness.Settings) { s.Model = name })
}

var _ = context.Background
