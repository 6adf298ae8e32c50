package chatcmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	"charm.land/bubbles/v2/textarea"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/sessionview"
	"github.com/mecha-agent/mecha/record/transcript"
)

// model is the screen: the conversation in a viewport, the prompts put to
// the person, a status line and the input box.
type model struct {
	eng   *engine
	st    styles
	vp    viewport.Model
	ta    textarea.Model
	sp    spinner.Model
	md    *markdown
	width int
	high  int

	entries   []entry
	streaming int            // the entry the model's text streams into, -1 for none
	calls     map[string]int // call id → its entry
	asks      []askMsg       // permission prompts waiting, the first shown

	// denying is true while the person writes the reason of the denial
	// of asks[0] (n pressed): Enter sends it; stash is what the input box
	// held before, put back then.
	denying bool
	stash   string

	running  bool
	quitting bool
	ctrlC    bool   // Ctrl-C pressed once: the next one quits
	first    string // the prompt given on the command line, sent at the start
	noted    map[string]bool
	status   status
	in       typing
	hist     *history
	search   *rsearch // a Ctrl-R search in progress
	pick     *picker  // a list to choose from (/model, /resume)
	// showThinking unfolds the model's thinking under its answers (Ctrl-T).
	showThinking bool
	// below is set when the conversation grew while scrolled up: a marker
	// says so until its end is in view again.
	below bool
	// notifyMode is [chat] notify; focus what the terminal reported.
	notifyMode string
	focus      focus
	pasted     bool // the input box holds a paste (kept out of the history file)
	now        func() time.Time
}

func newModel(eng *engine, st styles, md *markdown) *model {
	ta := textarea.New()
	ta.Placeholder = "Ask mecha to do something (/help for commands)"
	ta.ShowLineNumbers = false
	ta.Prompt = "│ "
	// The box grows with its text (a paste of many lines) up to a third
	// of the screen, then scrolls; what it holds is not bounded by that.
	ta.DynamicHeight = true
	ta.MinHeight = 3
	ta.MaxHeight = 8
	ta.MaxContentHeight = maxInputLines
	ta.SetHeight(3)
	ta.CharLimit = 0
	ta.KeyMap.InsertNewline = key.NewBinding(key.WithKeys("alt+enter", "shift+enter", "ctrl+j"))
	ta.Focus()
	sp := spinner.New(spinner.WithSpinner(spinner.Dot))
	vp := viewport.New(viewport.WithWidth(80), viewport.WithHeight(20))
	return &model{eng: eng, st: st, md: md, ta: ta, sp: sp, vp: vp, streaming: -1,
		calls: map[string]int{}, noted: map[string]bool{}, hist: &history{}, width: 80, high: 24, now: eng.env.Clock.Now}
}

// maxInputLines bounds the lines of the input box (the textarea's own
// limit, 10,000, is a little higher).
const maxInputLines = 9999

func (m *model) Init() tea.Cmd {
	cmds := []tea.Cmd{textarea.Blink, m.sp.Tick}
	if len(m.asks) > 0 {
		// The workspace's question: drawn now, answered once its choices
		// show; the prompt given on the command line waits for it.
		cmds = append(cmds, m.promptShown())
	} else if m.first != "" {
		first := m.first
		cmds = append(cmds, func() tea.Msg { return firstMsg(first) })
	}
	return tea.Batch(cmds...)
}

// firstMsg sends the prompt given on the command line.
type firstMsg string

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m.handling(msg)
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.high = msg.Width, msg.Height
		m.md.setWidth(msg.Width - 2)
		m.ta.MaxHeight = max(3, msg.Height/3)
		m.ta.SetWidth(msg.Width)
		m.refresh()
		return m, nil
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		return m, m.paste(msg.Content)
	case tea.FocusMsg:
		m.focus = focusIn
		return m, nil
	case tea.BlurMsg:
		m.focus = focusOut
		return m, nil
	case tea.MouseWheelMsg:
		switch msg.Button {
		case tea.MouseWheelUp:
			m.vp.ScrollUp(3)
		case tea.MouseWheelDown:
			m.vp.ScrollDown(3)
		}
		m.refresh()
		return m, nil
	case settleMsg:
		return m, m.settle(msg)
	case readyMsg:
		cmd := m.checkReady()
		m.refresh()
		return m, cmd
	case spinner.TickMsg:
		var cmd tea.Cmd
		m.sp, cmd = m.sp.Update(msg)
		if m.running {
			m.refresh()
		}
		return m, cmd
	case eventMsg:
		m.event(msg)
	case runDoneMsg:
		return m, m.runDone(msg)
	case askMsg:
		m.asks = append(m.asks, msg)
		var cmd tea.Cmd
		if len(m.asks) == 1 {
			cmd = tea.Batch(m.promptShown(), m.notify(notifyAsk))
		}
		m.refresh()
		return m, cmd
	case configMsg:
		m.status.provider, m.status.model = msg.rc.Provider, msg.rc.Model
	case modelsMsg:
		m.modelsDone(msg)
		m.layout()
	case editorDoneMsg:
		m.editorDone(msg)
	case firstMsg:
		if m.trustPending() {
			m.first = string(msg)
			break
		}
		m.first = ""
		m.startPrompt(string(msg))
	case noteMsg:
		// A setting's note (a sandbox the kernel lacks) would come with
		// every prompt: once is enough.
		if !m.noted[string(msg)] {
			m.noted[string(msg)] = true
			m.add(entry{kind: kNote, text: string(msg)})
		}
	case slashDoneMsg:
		m.add(entry{kind: kNote, text: msg.text})
	}
	m.refresh()
	return m, nil
}

// key handles a key press: the keys of the chat, then the input box and
// the prompt shown (input.go has their rules).
func (m *model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.search != nil {
		return m.searchKey(k)
	}
	if m.pick != nil {
		return m.pickerKey(k)
	}
	if k.String() == "ctrl+c" {
		return m.ctrlc()
	}
	m.ctrlC = false
	if m.historyKey(k.String()) {
		return nil
	}
	switch k.String() {
	case "ctrl+r":
		m.startSearch()
		return nil
	case "tab":
		if m.completeSlash() {
			return nil
		}
		if m.completeMention() {
			m.layout()
			m.refresh()
			return nil
		}
	case "ctrl+g":
		return m.editor()
	case "ctrl+d":
		if m.ta.Value() == "" {
			return m.quit()
		}
	case "esc":
		if v := m.ta.Value(); !m.running && strings.HasPrefix(v, "/") && !strings.Contains(v, "\n") { // a command being typed
			m.setInput("")
			m.refresh()
			return nil
		}
		if m.running {
			m.eng.interrupt()
			m.dropAsks()
			m.add(entry{kind: kNote, text: "interrupting…"})
			m.refresh()
		}
		return nil
	case "ctrl+t":
		m.showThinking = !m.showThinking
		m.refresh()
		return nil
	case "pgup":
		m.vp.PageUp()
		m.refresh()
		return nil
	case "pgdown":
		m.vp.PageDown()
		m.refresh()
		return nil
	case "end":
		m.vp.GotoBottom()
		m.refresh() // and the cursor goes to the end of its line
	}
	return m.input(k)
}

// dropAsks forgets the prompts waiting: their run has ended or is ending.
func (m *model) dropAsks() {
	if m.denying {
		m.denying = false
		m.ta.Reset()
		m.insert(m.stash)
		m.stash = ""
	}
	m.asks = nil
	m.in.ready = false
	m.in.heldFor = nil
}

// ctrlc quits on the second press in a row; a run in progress is
// interrupted first and its records closed before the program ends.
func (m *model) ctrlc() tea.Cmd {
	if !m.ctrlC {
		m.ctrlC = true
		m.add(entry{kind: kNote, text: "press Ctrl-C again to quit (Esc interrupts a run)"})
		m.refresh()
		return nil
	}
	return m.quit()
}

// quit ends the chat; a run in progress is interrupted first and its
// records closed before the program ends.
func (m *model) quit() tea.Cmd {
	m.quitting = true
	if m.running {
		m.eng.interrupt()
		m.dropAsks()
		return nil // runDone quits
	}
	return tea.Quit
}

// answer answers the prompt shown with y, n or a; the next one waiting,
// if any, is shown.
func (m *model) answer(k string) tea.Cmd {
	a := m.asks[0]
	if a.trust != "" {
		return m.answerTrust(k)
	}
	var ans answer
	var said string
	switch strings.ToLower(k) {
	case "y":
		ans, said = answerOnce, "allowed once"
	case "a":
		ans, said = answerAlways, "allowed for the rest of the session"
	case "n":
		// The call is denied now, whatever comes next; what the person
		// writes until Enter goes to the model with the denial.
		m.denying, m.stash = true, m.ta.Value()
		m.ta.Reset()
		m.in.ready = false
		m.add(entry{kind: kNote, text: fmt.Sprintf("%s: denied; say why for the model and press Enter (Enter alone: no reason)", textfmt.Visible(a.req.Tool))})
		m.layout()
		m.refresh()
		return nil
	case "r":
		if a.rule == "" {
			return nil
		}
		ans, said = answerRule, "allowed, and always here: the rule allow "+textfmt.Visible(a.rule)+" is saved in $MECHA_HOME/permissions.toml"
	default:
		return nil
	}
	a.reply <- ans
	m.asks = m.asks[1:]
	m.in.ready = false
	m.add(entry{kind: kNote, text: fmt.Sprintf("%s: %s", textfmt.Visible(a.req.Tool), said)})
	m.refresh()
	if len(m.asks) > 0 {
		return m.promptShown()
	}
	return nil
}

// denied sends the denial of the prompt shown, with reason, and puts
// back what the input box held before n.
func (m *model) denied(reason string) tea.Cmd {
	a := m.asks[0]
	a.reason <- reason
	a.reply <- answerDeny
	m.asks = m.asks[1:]
	m.denying = false
	m.ta.Reset()
	m.insert(m.stash)
	m.stash = ""
	said := "denied"
	if reason != "" {
		said += ", with your reason"
	}
	m.add(entry{kind: kNote, text: fmt.Sprintf("%s: %s", textfmt.Visible(a.req.Tool), said)})
	m.layout()
	m.refresh()
	if len(m.asks) > 0 {
		return m.promptShown()
	}
	return nil
}

// submit sends what was typed: a denial's reason, a slash command,
// steering while a run works, or the next prompt.
func (m *model) submit() tea.Cmd {
	text := strings.TrimSpace(m.ta.Value())
	if m.denying && len(m.asks) > 0 {
		return m.denied(text)
	}
	if text == "" {
		return nil
	}
	if m.trustPending() && !strings.HasPrefix(text, "/") {
		m.note("answer the question about the workspace first: y trusts it, n goes on untrusted (your text stays in the box)")
		m.refresh()
		return nil
	}
	if !strings.HasPrefix(text, "/") && !m.running {
		if _, err := m.eng.mentions(text); err != nil {
			// The prompt stays in the box, to be fixed.
			m.add(entry{kind: kError, text: textfmt.Visible(err.Error()) + " (nothing was sent)"})
			m.refresh()
			return nil
		}
	}
	m.ta.Reset()
	m.layout()
	pasted := m.pasted
	m.pasted = false
	save := saveHistory(m.hist.add(text, !pasted))
	if strings.HasPrefix(text, "/") {
		return tea.Batch(save, m.slash(text))
	}
	if m.running {
		m.eng.queueSteering(text)
		m.add(entry{kind: kSteer, text: "(queued; sent with the results of the calls running now) " + textfmt.Visible(text)})
		m.refresh()
		return save
	}
	m.startPrompt(text)
	return save
}

// saveHistory runs a history write in the background; a failure is a note.
func saveHistory(write func() error) tea.Cmd {
	if write == nil {
		return nil
	}
	return func() tea.Msg {
		if err := write(); err != nil {
			return noteMsg("the prompt history was not saved: " + textfmt.Visible(textfmt.OneLine(err.Error())))
		}
		return nil
	}
}

func (m *model) startPrompt(text string) {
	m.add(entry{kind: kUser, text: textfmt.Visible(text)})
	m.running = true
	m.status.run = transcript.Usage{}
	m.eng.start(text)
	m.refresh()
}

// event shows one event of the run.
func (m *model) event(msg eventMsg) {
	ev := msg.ev
	m.status.taint = msg.taint
	switch ev.Kind {
	case agent.EventDelta:
		if ev.Delta.Kind != "text" || ev.Delta.Text == "" {
			return
		}
		if m.streaming < 0 {
			m.streaming = m.add(entry{kind: kStream})
		}
		m.entries[m.streaming].text += ev.Delta.Text
	case agent.EventMessage:
		m.message(ev.Message)
	case agent.EventToolStart:
		m.calls[ev.Call.ID] = m.add(entry{kind: kTool, call: ev.Call})
	case agent.EventToolDone:
		if i, ok := m.calls[ev.Call.ID]; ok && ev.Result != nil {
			e := &m.entries[i]
			e.done, e.failed, e.size, e.took = true, ev.Result.IsError, len(ev.Result.Content), ev.Took
			if ev.Result.IsError {
				e.text = textfmt.Clip(textfmt.OneLine(ev.Result.Content), 100)
			}
		}
	case agent.EventTurn:
		m.status.run = ev.Usage
	case agent.EventCompaction:
		m.status.run = ev.Usage
		m.add(entry{kind: kNote, text: fmt.Sprintf("compacted: %d earlier %s replaced by a summary of %d bytes (the model sees it from now on; the transcript keeps them all)",
			ev.Replaced, textfmt.Plural(ev.Replaced, "message", "messages"), len(ev.Compaction.Summary))})
	}
}

// message shows a recorded message: an answer replaces the text streamed
// for it with its Markdown; steering beside results is shown as sent.
func (m *model) message(msg *transcript.Message) {
	switch msg.Role {
	case "assistant":
		var text, thinking []string
		for _, b := range msg.Content {
			switch {
			case b.Type == transcript.BlockText && b.Text != "":
				text = append(text, b.Text)
			case b.Type == transcript.BlockThinking && b.Thinking != "":
				thinking = append(thinking, b.Thinking)
			}
		}
		answer := entry{kind: kAssistant, text: strings.Join(text, "\n\n"), thinking: strings.Join(thinking, "\n\n")}
		switch {
		case m.streaming >= 0 && (len(text) > 0 || len(thinking) > 0): // in place, before anything said meanwhile
			m.entries[m.streaming] = answer
		case m.streaming >= 0:
			m.entries[m.streaming] = entry{kind: kNote} // only calls: nothing to show
		case len(text) > 0 || len(thinking) > 0:
			m.add(answer)
		}
		m.streaming = -1
	case "user":
		results := false
		for _, b := range msg.Content {
			switch {
			case b.Type == transcript.BlockToolResult:
				results = true
			case b.Type == transcript.BlockText && results:
				m.add(entry{kind: kSteer, text: "sent beside the results: " + textfmt.Visible(b.Text)})
			case b.Type == transcript.BlockImage && b.SHA256 != "":
				m.add(entry{kind: kNote, text: "attached " + sessionview.ImageLine(b)})
			}
		}
	}
}

// runDone ends a prompt: its outcome, the usage so far, then steering
// typed too late for any call goes as the next prompt.
func (m *model) runDone(msg runDoneMsg) tea.Cmd {
	m.running = false
	m.dropAsks()
	if m.streaming >= 0 {
		m.entries[m.streaming].kind = kAssistant
		m.streaming = -1
	}
	if msg.res != nil {
		m.status.addRun(m.eng.door.Config().Prices(), msg.res.Usage)
	}
	m.status.run = transcript.Usage{}
	m.status.id = m.eng.current().ID
	switch {
	case errors.Is(msg.err, agent.ErrNothingToCompact):
		m.add(entry{kind: kNote, text: msg.err.Error()})
	case errors.Is(msg.err, context.Canceled):
		m.add(entry{kind: kNote, text: "interrupted; the transcript keeps everything up to here"})
	case msg.err != nil:
		m.add(entry{kind: kError, text: textfmt.Visible(textfmt.OneLine(msg.err.Error()))})
	case msg.res != nil && msg.res.StopReason != agent.StopEndTurn && msg.res.StopReason != agent.StopCompacted:
		m.add(entry{kind: kNote, text: "stopped: " + msg.res.StopReason})
	}
	if m.quitting {
		return tea.Quit
	}
	if left := m.eng.takeSteering(); len(left) > 0 {
		m.startPrompt(strings.Join(left, "\n\n"))
		m.refresh()
		return nil
	}
	m.refresh()
	if msg.err != nil && !errors.Is(msg.err, context.Canceled) {
		return m.notify(notifyError)
	}
	return m.notify(notifyDone)
}

// add appends an entry and returns its index.
func (m *model) add(e entry) int {
	m.entries = append(m.entries, e)
	return len(m.entries) - 1
}

// noteMsg is a line for the conversation (what the chat's commands write
// to their error stream).
type noteMsg string

// slashDoneMsg is the outcome of a slash command that ran in the background.
type slashDoneMsg struct{ text string }

// trustPending reports whether the workspace's question waits.
func (m *model) trustPending() bool {
	for _, a := range m.asks {
		if a.trust != "" {
			return true
		}
	}
	return false
}

// answerTrust answers the workspace's question: y trusts the directory
// (config.toml, as mecha trust does), n goes on untrusted for this chat.
// Then the prompt given on the command line, if any, is sent.
func (m *model) answerTrust(k string) tea.Cmd {
	a := m.asks[0]
	var said string
	switch strings.ToLower(k) {
	case "y":
		dir, err := m.eng.door.TrustWorkspace()
		if err != nil {
			m.add(entry{kind: kError, text: textfmt.Visible(err.Error())})
			said = "not trusted: " + textfmt.Visible(a.trust) + " (the chat goes on untrusted)"
		} else {
			said = "trusted: " + textfmt.Visible(dir) + " (mecha trust --revoke undoes it)"
		}
	case "n":
		said = "not trusted for this chat: what the tools read in " + textfmt.Visible(a.trust) + " counts as untrusted (mecha trust trusts it)"
	default:
		return nil
	}
	if err := m.eng.door.Update(func(s *harness.Settings) { s.TrustAsked = true }); err != nil {
		m.add(entry{kind: kError, text: textfmt.Visible(err.Error())})
	}
	m.asks = m.asks[1:]
	m.in.ready = false
	m.add(entry{kind: kNote, text: said})
	m.refresh()
	if len(m.asks) > 0 {
		return m.promptShown()
	}
	if first := m.first; first != "" {
		m.first = ""
		m.startPrompt(first)
	}
	return nil
}
