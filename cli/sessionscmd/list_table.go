package sessionscmd

import (
	"bufio"
	"strings"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// writeListTable writes the rows as padded columns. Everything a header
// or a summary holds is shown through textfmt.Visible: a title, a model or
// a stop reason is text a model, a client or a file wrote, and none of it
// may reach the terminal as a control sequence.
func writeListTable(env *cmdkit.Env, rows []listed) error {
	type cells struct{ id, model, turns, stop string }
	all := make([]cells, len(rows))
	idW, modelW, turnsW, stopW := len("ID"), len("PROVIDER/MODEL"), len("TURNS"), len("STOP")
	for i, r := range rows {
		m := r.Meta
		c := cells{id: textfmt.VisibleLine(m.ID), model: textfmt.VisibleLine(m.Provider + "/" + m.Model), turns: textfmt.Count(r.Turns), stop: "—"}
		if !r.Finished {
			c.turns = "—"
		}
		if r.Stop != "" {
			c.stop = textfmt.Clip(textfmt.VisibleLine(r.Stop), 20)
		}
		all[i] = c
		idW = max(idW, width(c.id))
		modelW = max(modelW, width(c.model))
		turnsW = max(turnsW, width(c.turns))
		stopW = max(stopW, width(c.stop))
	}
	st := cmdkit.NewStyle(env)
	w := bufio.NewWriterSize(env.Out, 64<<10)
	kindW := len("reflection")
	w.WriteString(st.Bold(pad("ID", idW+2) + pad("CREATED", 18) + pad("KIND", kindW+2) + pad("PROVIDER/MODEL", modelW+2) +
		padLeft("TURNS", turnsW) + "  " + pad("STOP", stopW+2) + "TITLE"))
	w.WriteByte('\n')
	for i, r := range rows {
		c := all[i]
		w.WriteString(pad(c.id, idW+2))
		w.WriteString(r.Meta.CreatedAt.In(env.Zone()).Format("2006-01-02 15:04"))
		w.WriteString("  ")
		w.WriteString(pad(r.kind, kindW+2))
		w.WriteString(pad(c.model, modelW+2))
		w.WriteString(padLeft(c.turns, turnsW))
		w.WriteString("  ")
		w.WriteString(pad(c.stop, stopW+2))
		w.WriteString(textfmt.Clip(textfmt.VisibleLine(r.Meta.Title), 70))
		w.WriteByte('\n')
	}
	return w.Flush()
}

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, n int) string { return s + strings.Repeat(" ", max(n-width(s), 0)) }

func padLeft(s string, n int) string { return strings.Repeat(" ", max(n-width(s), 0)) + s }
