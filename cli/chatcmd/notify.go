package chatcmd

import (
	"strings"

	tea "charm.land/bubbletea/v2"
)

// The chat calls for attention when a permission question waits or a run
// ends, as config.toml's [chat] notify says: a bell, or a desktop
// notification by OSC 9 (iTerm2, WezTerm, Windows Terminal, ...) or OSC
// 777 (rxvt-unicode, foot, VTE terminals), or nothing. It does so only
// while the terminal's window is not focused: the chat asks the terminal
// to report focus, and one that never reports is taken as unfocused. The
// notification's text is the chat's own, a fixed sentence: nothing a
// model, a tool or a transcript wrote is ever put in an escape sequence.

// focus is what the terminal said of its window's focus.
type focus int

const (
	focusUnknown focus = iota
	focusIn
	focusOut
)

// The notifications' texts.
const (
	notifyAsk   = "mecha: a permission question waits"
	notifyDone  = "mecha: the run ended"
	notifyError = "mecha: the run stopped on an error"
)

// notify calls for attention with text (one of the constants above).
func (m *model) notify(text string) tea.Cmd {
	if m.focus == focusIn {
		return nil
	}
	if seq := notification(m.notifyMode, text); seq != "" {
		return tea.Raw(seq)
	}
	return nil
}

// notification is the sequence that notifies with text in mode ("" for
// none). text keeps only printable ASCII other than ";" whatever it is.
func notification(mode, text string) string {
	text = strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f || r == ';' {
			return -1
		}
		return r
	}, text)
	switch mode {
	case "", "bell":
		return "\a"
	case "osc9":
		return "\x1b]9;" + text + "\x07"
	case "osc777":
		return "\x1b]777;notify;mecha;" + text + "\x07"
	}
	return ""
}
