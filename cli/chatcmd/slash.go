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
	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/cli/replaycmd"
	"github.com/mecha-agent/mecha/cli/scriptcmd"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// slashCommands are the chat's commands, in the order /help and the menu
// list them.
var slashCommands = []struct{ name, args, what string }{
	{"/resume", "[ID|WORDS]", "switch to session ID (an id, a prefix or last); alone or with words, choose from this workspace's sessions"},
	{"/new", "", "start a new session with the next prompt: nothing of this one is carried"},
	{"/clear", "", "the same as /new"},
	{"/compact", "[INSTRUCTIONS]", "replace the conversation before the last answer with a summary the model writes (following INSTRUCTIONS), recorded as a compaction"},
	{"/model", "[NAME]", "use model NAME from the next prompt on; alone, choose from the known models"},
	{"/rewind", "[N]", "put back the files the file tools changed since prompt N and continue from before it, in a new session; alone, list the prompts"},
	{"/cost", "", "tokens and cost of this session so far"},
	{"/replay", "", "replay this session so far against the current model, and report"},
	{"/script", "", "write the script that redoes this session's tool calls, and say where"},
	{"/help", "", "the commands and keys"},
	{"/exit", "", "leave the chat (also /quit, or Ctrl-D on an empty input box)"},
	{"/quit", "", "leave the chat"},
}

// Keys is the chat's keys, as /help and "mecha chat --help" show them.
const Keys = `Enter               send (a slash command runs; while tools run, text steers them)
Alt-Enter, Shift-Enter, Ctrl-J
                    a new line in the input box (a paste stays in the box until Enter)
Up, Down            on the box's first or last row: the previous or next prompt
                    of this workspace (kept across chats; a paste is never saved)
Ctrl-R              search the prompt history (Ctrl-R again: older; Enter takes it)
Ctrl-G              edit the input box in $VISUAL or $EDITOR (vi if neither is set)
Tab                 complete the slash command the menu shows, or an @FILE mention
                    (@FILE attaches a workspace file's content to the prompt; a PNG,
                    JPEG, GIF or WebP of at most 5 MiB goes as an image, to providers
                    that take images: anthropic, openai, local)
y, n, a, r          answer a permission prompt, once it shows its choices (a second
                    after it appears with no key pressed; before that, keys go to the
                    box): y yes; n no, then a reason for the model and Enter; a the
                    tool for this session; r always, a rule saved for this workspace
Esc                 interrupt a run; close a picker, a search; drop a command being typed
Ctrl-T              show or fold the model's thinking
PgUp, PgDn, wheel   scroll the conversation; End jumps to its end
Ctrl-D              leave, on an empty input box (as /exit)
Ctrl-C              twice: leave`

// slashHelp is what /help says.
func slashHelp() string { return slashList() + Keys }

// slashList is the commands, one a line.
func slashList() string {
	var b strings.Builder
	for _, c := range slashCommands {
		fmt.Fprintf(&b, "%-19s %s\n", strings.TrimSpace(c.name+" "+c.args), c.what)
	}
	return b.String()
}

// slashNames are the commands' names.
func slashNames() []string {
	out := make([]string, len(slashCommands))
	for i, c := range slashCommands {
		out[i] = c.name
	}
	return out
}

// slashMenu is the commands the input box's text may be the start of,
// while it is a slash and a word with nothing after it.
func (m *model) slashMenu() []int {
	v := m.ta.Value()
	if !strings.HasPrefix(v, "/") || strings.ContainsAny(v, " \n") || m.pick != nil || len(m.asks) > 0 {
		return nil
	}
	var out []int
	for i, c := range slashCommands {
		if strings.HasPrefix(c.name, v) {
			out = append(out, i)
		}
	}
	return out
}

// slashMenuView is the menu of commands while one is being typed.
func (m *model) slashMenuView() string {
	var lines []string
	for _, i := range m.slashMenu() {
		c := slashCommands[i]
		lines = append(lines, "  "+m.st.user.Render(fmt.Sprintf("%-8s", c.name))+" "+m.st.dim.Render(textfmt.Clip(strings.TrimSpace(c.args+"  "+c.what), max(m.width-13, 20))))
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n" + m.st.dim.Render("  (Tab completes)")
}

// completeSlash completes the command being typed: to the one command it
// starts, else to what the commands it starts share.
func (m *model) completeSlash() bool {
	menu := m.slashMenu()
	if len(menu) == 0 {
		return false
	}
	common := slashCommands[menu[0]].name
	for _, i := range menu[1:] {
		n := slashCommands[i].name
		for !strings.HasPrefix(n, common) {
			common = common[:len(common)-1]
		}
	}
	if len(menu) == 1 {
		common += " "
	}
	m.setInput(common)
	return true
}

// slash runs a slash command.
func (m *model) slash(line string) tea.Cmd {
	name, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/help":
		m.note(slashHelp())
	case "/exit", "/quit":
		return m.quit()
	case "/cost":
		m.note(m.cost())
	case "/model":
		if arg == "" && !m.running {
			return m.openModelPicker()
		}
		m.model(arg)
	case "/new", "/clear", "/resume", "/replay", "/script", "/compact", "/rewind":
		if m.running {
			m.note(name + " waits for the run to end (Esc interrupts it)")
			break
		}
		return m.sessionCommand(name, arg)
	default:
		m.note(fmt.Sprintf("unknown command %s%s; /help lists the commands", textfmt.Visible(textfmt.Clip(name, 40)), cmdkit.DidYouMean(name, slashNames())))
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
	if m.running {
		m.note("/model waits for the run to end (Esc interrupts it)")
		return
	}
	m.eng.setModel(name)
	m.status.model = name
	m.note("model: " + textfmt.Visible(name) + " from the next prompt on")
}

// cost says the session's usage and cost so far.
func (m *model) cost() string {
	u, cost := m.status.totals(m.eng.door.Config().Prices())
	if cost == "—" {
		cost += " (no price for it in mecha's table or config.toml)"
	}
	return fmt.Sprintf("tokens: %s in, %s out, %s cache read, %s cache write\ncost: %s",
		textfmt.Count(u.InputTokens), textfmt.Count(u.OutputTokens), textfmt.Count(u.CacheReadTokens),
		textfmt.Count(u.CacheWriteTokens), cost)
}

// resume switches to the session arg names; alone, or with words that
// name no session, it opens the picker of this workspace's sessions
// (filtered by the words).
func (m *model) resume(arg string) {
	if arg == "" {
		m.sessionPicker("")
		return
	}
	ref, err := m.eng.env.ResolveSession(arg)
	if err != nil && !strings.ContainsAny(arg, "/") && m.sessionPicker(arg) {
		return
	}
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

// sessionPicker opens the picker of this workspace's sessions, newest
// first, each with its date, id and title, filtered by filter; false when
// the workspace has none (said in the conversation).
func (m *model) sessionPicker(filter string) bool {
	items, err := m.eng.sessionItems()
	if err != nil {
		m.add(entry{kind: kError, text: textfmt.Visible(textfmt.OneLine(err.Error()))})
		return true
	}
	if len(items) == 0 {
		if filter == "" {
			m.note("no sessions of this workspace yet")
			return true
		}
		return false
	}
	m.pick = &picker{title: "resume a session of this workspace", items: items, filter: filter,
		choose: func(it pickItem) tea.Cmd { m.resume(it.value); return nil }}
	m.layout()
	return true
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
	m.status.fromSession(m.eng.door.Config().Prices(), s.Summaries())
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

// sessionItems are the newest sessions of the chat's workspace (at most
// 500), for /resume's picker: those -c would continue (no replay, rerun
// or reflection).
func (e *engine) sessionItems() ([]pickItem, error) {
	ws, err := workdir.Dir(e.settings().Workspace)
	if err != nil {
		return nil, err
	}
	store, err := e.env.Store()
	if err != nil {
		return nil, err
	}
	l, err := store.List()
	if err != nil {
		return nil, err
	}
	ws = workdir.Canonical(ws)
	var out []pickItem
	for _, s := range l.Sessions {
		if !cmdkit.Continuable(s.Meta) || workdir.Canonical(s.Meta.Workspace) != ws || len(out) == 500 {
			continue
		}
		title := s.Meta.Title
		if title == "" {
			title = "(untitled)"
		}
		out = append(out, pickItem{
			label:  s.Meta.CreatedAt.In(e.env.Zone()).Format("2006-01-02 15:04") + "  " + textfmt.Visible(s.Meta.ID),
			detail: textfmt.Visible(textfmt.Clip(textfmt.OneLine(title), 80)),
			value:  s.Meta.ID,
		})
	}
	return out, nil
}

// setModel makes name the model of the next attaches.
func (e *engine) setModel(name string) {
	e.mu.Lock()
	e.overrides["model"] = true
	e.mu.Unlock()
	e.door.Update(func(s *harness.Settings) { s.Model = name })
}

var _ = context.Background
