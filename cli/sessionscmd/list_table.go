package sessionscmd

import (
	"bufio"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
)

// writeListTable writes the rows as padded columns. Everything a header
// or a summary holds is shown through textfmt.Visible: a title, a model or
// a stop reason is text a model, a client or a file wrote, and none of it
// may reach the terminal as a control sequence.
func writeListTable(env *cmdkit.Env, rows []listed) error {
	type cells struct{ id, model, turns, stop string }
	type widths struct{ id, model, turns, stop int }
	// The cells are made, then the lines, in chunks on every core; the
	// lines are written in order.
	const chunk = 1024
	all := make([]cells, len(rows))
	chunkW := make([]widths, (len(rows)+chunk-1)/chunk)
	session.Parallel(len(chunkW), func(k int) {
		wd := widths{len("ID"), len("PROVIDER/MODEL"), len("TURNS"), len("STOP")}
		// A store holds a handful of models: each one's column is made once.
		models := map[[2]string]string{}
		for i := k * chunk; i < min(len(rows), (k+1)*chunk); i++ {
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
			wd.id = max(wd.id, width(c.id))
			wd.model = max(wd.model, width(c.model))
			wd.turns = max(wd.turns, width(c.turns))
			wd.stop = max(wd.stop, width(c.stop))
		}
		chunkW[k] = wd
	})
	wd := widths{len("ID"), len("PROVIDER/MODEL"), len("TURNS"), len("STOP")}
	for _, c := range chunkW {
		wd = widths{max(wd.id, c.id), max(wd.model, c.model), max(wd.turns, c.turns), max(wd.stop, c.stop)}
	}
	st := cmdkit.NewStyle(env)
	w := bufio.NewWriterSize(env.Out, 256<<10)
	kindW := len("reflection")
	w.WriteString(st.Bold(pad("ID", wd.id+2) + pad("CREATED", 18) + pad("KIND", kindW+2) + pad("PROVIDER/MODEL", wd.model+2) +
		padLeft("TURNS", wd.turns) + "  " + pad("STOP", wd.stop+2) + "TITLE"))
	w.WriteByte('\n')
	zone := env.Zone()
	lines := make([][]byte, len(chunkW))
	session.Parallel(len(chunkW), func(k int) {
		b := make([]byte, 0, 160*chunk)
		for i := k * chunk; i < min(len(rows), (k+1)*chunk); i++ {
			r := &rows[i]
			c := &all[i]
			b = appendPad(b, c.id, wd.id+2)
			b = appendMinute(b, r.Meta.CreatedAt.In(zone))
			b = append(b, "  "...)
			b = appendPad(b, r.kind, kindW+2)
			b = appendPad(b, c.model, wd.model+2)
			b = appendSpaces(b, wd.turns-width(c.turns))
			b = append(b, c.turns...)
			b = append(b, "  "...)
			b = appendPad(b, c.stop, wd.stop+2)
			b = append(b, textfmt.Clip(textfmt.VisibleLine(r.Meta.Title), 70)...)
			b = append(b, '\n')
		}
		lines[k] = b
	})
	for k := range lines {
		w.Write(lines[k])
		lines[k] = nil
	}
	return w.Flush()
}

// appendMinute appends t as AppendFormat's "2006-01-02 15:04" does, by
// hand for the years of four digits (a fifth of printing the table went to
// the general formatter).
func appendMinute(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02 15:04")
	}
	h, mi, _ := t.Clock()
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10), ' ',
		byte('0'+h/10), byte('0'+h%10), ':', byte('0'+mi/10), byte('0'+mi%10))
}

// appendPad appends s and spaces to fill n columns.
func appendPad(b []byte, s string, n int) []byte {
	return appendSpaces(append(b, s...), n-width(s))
}

const spaces = "                                                                "

func appendSpaces(b []byte, n int) []byte {
	for n > 0 {
		k := min(n, len(spaces))
		b = append(b, spaces[:k]...)
		n -= k
	}
	return b
}

func width(s string) int { return utf8.RuneCountInString(s) }

func pad(s string, n int) string { return s + strings.Repeat(" ", max(n-width(s), 0)) }

func padLeft(s string, n int) string { return strings.Repeat(" ", max(n-width(s), 0)) + s }
