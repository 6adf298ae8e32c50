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
	// A store holds a handful of models: each one's column is made once.
	models := map[[2]string]string{}
	for i := range rows {
		r := &rows[i]
		m := &r.Meta
		model, ok := models[[2]string{m.Provider, m.Model}]
		if !ok {
			model = textfmt.VisibleLine(m.Provider + "/" + m.Model)
			models[[2]string{m.Provider, m.Model}] = model
		}
		c := cells{id: textfmt.VisibleLine(m.ID), model: model, turns: textfmt.Count(r.Turns), stop: "—"}
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
	w := bufio.NewWriterSize(env.Out, 256<<10)
	kindW := len("reflection")
	w.WriteString(st.Bold(pad("ID", idW+2) + pad("CREATED", 18) + pad("KIND", kindW+2) + pad("PROVIDER/MODEL", modelW+2) +
		padLeft("TURNS", turnsW) + "  " + pad("STOP", stopW+2) + "TITLE"))
	w.WriteByte('\n')
	zone := env.Zone()
	var when []byte
	for i := range rows {
		r := &rows[i]
		c := &all[i]
		writePad(w, c.id, idW+2)
		when = r.Meta.CreatedAt.In(zone).AppendFormat(when[:0], "2006-01-02 15:04")
		w.Write(when)
		w.WriteString("  ")
		writePad(w, r.kind, kindW+2)
		writePad(w, c.model, modelW+2)
		writeSpaces(w, turnsW-width(c.turns))
		w.WriteString(c.turns)
		w.WriteString("  ")
		writePad(w, c.stop, stopW+2)
		w.WriteString(textfmt.Clip(textfmt.VisibleLine(r.Meta.Title), 70))
		w.WriteByte('\n')
	}
	return w.Flush()
}

// writePad writes s and spaces to fill n columns.
func writePad(w *bufio.Writer, s string, n int) {
	w.WriteString(s)
	writeSpaces(w, n-width(s))
}

const spaces = "                                                                "

func writeSpaces(w *bufio.Writer, n int) {
	for n > 0 {
		k := min(n, len(spaces))
		w.WriteString(spaces[:k])
		n -= k
	}
}

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, n int) string { return s + strings.Repeat(" ", max(n-width(s), 0)) }

func padLeft(s string, n int) string { return strings.Repeat(" ", max(n-width(s), 0)) + s }
