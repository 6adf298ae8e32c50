package chatcmd

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// What the person types reaches the input box, with two exceptions that
// need care: a paste, and the answer to a permission prompt.
//
// A paste goes into the input box whole, newlines included, and is sent
// only when the person presses Enter. With bracketed paste (every modern
// terminal) it arrives as one tea.PasteMsg. Without it, a paste arrives as
// keys that follow one another with no pause, its newlines as Enter. The
// pause is the time the chat waited for a key: from when it was done with
// the key before (its screen drawn) to when this one came, less the time
// spent meanwhile on other messages (the time a key takes to handle grows
// with the input box, and a stream redraws the screen, neither of which
// is the person's). Keys with less than burstGap of pause are a burst no
// person types, and an Enter in a burst is a newline. An Enter is also
// held for burstGap before it sends, so that one followed at once by more
// keys is a newline too.
//
// The rule for permission prompts: a prompt answers only to a y, n or a
// pressed while its choices are shown, and they are shown only once the
// prompt has been on the screen for promptQuiet with no key pressed
// meanwhile. Every other key, and every key before then, goes to the
// input box, and pressing one hides the choices until the keyboard has
// been still for promptQuiet again. So keys typed ahead, before the prompt
// was drawn or while the person, not looking, keeps typing after it, stay
// in the input box and never answer it. A paste never answers a prompt: a
// bracketed one goes to the input box, and an answer key is held for
// burstGap like Enter, so one followed at once by more keys (a paste
// without brackets) is text. Esc interrupts at any time.
//
// Why a quiet period, and not Enter to confirm a choice: typed-ahead text
// ends with Enter as often as not, so "also check the docs" and Enter
// would choose a and confirm it. Why not a grace period counted only from
// when the prompt is drawn: a person who keeps typing through it would
// answer with the next y, n or a. A second is what browsers wait before
// enabling the buttons of their security dialogs (Firefox's
// security.dialog_enable_delay): longer than a typist's pause between
// words, shorter than reading a prompt.
//
// Timing errs on the safe side: a chat too busy to read keys as they come
// sees them bunched, so an Enter may become a newline (press it again) and
// an answer may become text, never the reverse. A paste without brackets
// on a machine so loaded that the chat stalls mid-paste for more than
// burstGap may still be cut into two prompts; bracketed paste has no such
// limit.
const (
	promptQuiet = time.Second
	burstGap    = 20 * time.Millisecond
)

// typing is the state of the rules above.
type typing struct {
	last time.Time // the last key or paste
	// The pause before a key: done is when the chat was done with the
	// last key or paste, busy the time spent since on other messages;
	// began is when the message being handled came (zero once drawn).
	done, began time.Time
	busy        time.Duration
	inputNow    bool             // the message being handled is a key or a paste
	held        *tea.KeyPressMsg // an Enter or an answer, waiting burstGap
	heldFor     chan answer      // the prompt a held answer is for
	heldSeq     int
	shown       time.Time // when the prompt shown first was put on the screen
	ready       bool      // its choices are shown: y, n or a answers it
	ticking     bool      // a readyMsg is on its way
}

// settleMsg releases the key held as heldSeq, if nothing came after it.
type settleMsg struct{ seq int }

// readyMsg shows the prompt's choices if the keyboard has been quiet.
type readyMsg struct{}

// input handles a key that is not one of the chat's own (Ctrl-C, Esc,
// PgUp, PgDn): text for the input box, Enter, or an answer to a prompt.
func (m *model) input(k tea.KeyPressMsg) tea.Cmd {
	now := m.now()
	burst := !m.in.done.IsZero() && now.Sub(m.in.done)-m.in.busy < burstGap
	m.release()
	ready := m.in.ready
	m.in.last = now
	var cmd tea.Cmd
	switch {
	case k.String() == "enter" && burst:
		m.pasted = true // keys in a burst: a paste without brackets
		m.insert("\n")
	case k.String() == "enter":
		cmd = m.hold(k)
	case ready && !burst && isAnswer(k):
		m.in.heldFor = m.asks[0].reply
		return m.hold(k) // the choices stay shown
	default:
		var c tea.Cmd
		m.ta, c = m.ta.Update(k)
		cmd = c
		if m.ta.Value() == "" {
			m.pasted = false
		}
	}
	m.in.ready = false
	m.layout()
	return tea.Batch(cmd, m.readyLater())
}

// handling notes when a message came, for the pauses between keys.
func (m *model) handling(msg tea.Msg) {
	m.in.began = m.now()
	switch msg.(type) {
	case tea.KeyPressMsg, tea.PasteMsg:
		m.in.inputNow = true
	default:
		m.in.inputNow = false
	}
}

// drawn notes that the chat is done with the message it handled: the
// screen is drawn after each.
func (m *model) drawn() {
	if m.in.began.IsZero() {
		return // drawn with no message (the program's start)
	}
	now := m.now()
	if m.in.inputNow {
		m.in.done, m.in.busy = now, 0
	} else {
		m.in.busy += now.Sub(m.in.began)
	}
	m.in.began = time.Time{}
}

// paste puts pasted text into the input box, newlines included.
func (m *model) paste(text string) tea.Cmd {
	m.release()
	m.in.last = m.now()
	m.in.ready = false
	m.pasted = true
	text = normalizeNewlines(text)
	before := m.ta.LineCount()
	m.insert(text)
	if m.ta.LineCount()-before < strings.Count(text, "\n") {
		m.note(fmt.Sprintf("the paste was cut: the input box holds at most %s lines (a file is better for long text)", textfmt.Count(maxInputLines)))
		m.refresh()
	}
	m.layout()
	return m.readyLater()
}

// normalizeNewlines makes a terminal's line ends (CR, CRLF) newlines.
func normalizeNewlines(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// insert puts text at the cursor of the input box.
func (m *model) insert(text string) {
	m.ta, _ = m.ta.Update(tea.PasteMsg{Content: text})
}

func isAnswer(k tea.KeyPressMsg) bool {
	switch strings.ToLower(k.String()) {
	case "y", "n", "a", "r":
		return true
	}
	return false
}

// hold keeps k for burstGap: what it does depends on whether more keys
// follow at once.
func (m *model) hold(k tea.KeyPressMsg) tea.Cmd {
	m.in.held = &k
	m.in.heldSeq++
	seq := m.in.heldSeq
	return tea.Tick(burstGap, func(time.Time) tea.Msg { return settleMsg{seq} })
}

// release types the key held, when another key or a paste came right
// after it: it was part of a paste.
func (m *model) release() {
	k := m.in.held
	if k == nil {
		return
	}
	m.in.held, m.in.heldFor = nil, nil
	if k.String() == "enter" {
		m.insert("\n")
		return
	}
	m.ta, _ = m.ta.Update(*k)
}

// settle acts on the key held, nothing having come after it: Enter sends,
// an answer answers the prompt it was pressed for, if it still waits.
func (m *model) settle(msg settleMsg) tea.Cmd {
	k := m.in.held
	if k == nil || msg.seq != m.in.heldSeq {
		return nil
	}
	m.in.held = nil
	if k.String() == "enter" {
		return m.submit()
	}
	want := m.in.heldFor
	m.in.heldFor = nil
	if len(m.asks) > 0 && m.asks[0].reply == want {
		return m.answer(k.String())
	}
	return nil
}

// promptShown starts the quiet period of the prompt now shown first.
func (m *model) promptShown() tea.Cmd {
	m.in.shown, m.in.ready = m.now(), false
	return m.readyLater()
}

// readyAt is when the prompt shown may show its choices.
func (m *model) readyAt() time.Time {
	t := m.in.shown
	if m.in.last.After(t) {
		t = m.in.last
	}
	return t.Add(promptQuiet)
}

// readyLater schedules the check that shows the prompt's choices.
func (m *model) readyLater() tea.Cmd {
	if len(m.asks) == 0 || m.in.ready || m.in.ticking {
		return nil
	}
	m.in.ticking = true
	wait := max(m.readyAt().Sub(m.now()), time.Millisecond)
	return tea.Tick(wait, func(time.Time) tea.Msg { return readyMsg{} })
}

// checkReady shows the prompt's choices once the keyboard has been quiet.
func (m *model) checkReady() tea.Cmd {
	m.in.ticking = false
	if len(m.asks) == 0 || m.in.ready || m.denying {
		return nil
	}
	if m.now().Before(m.readyAt()) {
		return m.readyLater()
	}
	m.in.ready = true
	m.layout()
	return nil
}
