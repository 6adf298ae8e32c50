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
	type widths struct{ id, model, turns, stop int }
	type cells struct {
		id, model, turns, stop string
		w                      widths
	}
	// The cells are made, then the lines, in chunks on every core; the
	// lines are written in order.
	const chunk = 1024
	all := make([]cells, len(rows))
	chunkW := make([]widths, (len(rows)+chunk-1)/chunk)
	session.Parallel(len(chunkW), func(k int) {
		wd := widths{len("ID"), len("PROVIDER/MODEL"), len("TURNS"), len("STOP")}
		// A store holds a handful of models: each one's column is made once.
		type model struct {
			s string
			w int
		}
		models := map[[2]string]model{}
		for i := k * chunk; i < min(len(rows), (k+1)*chunk); i++ {
			r := &rows[i]
			m := &r.Meta
			md, ok := models[[2]string{m.Provider, m.Model}]
			if !ok {
				md.s, md.w = cell(m.Provider+"/"+m.Model, 0)
				models[[2]string{m.Provider, m.Model}] = md
			}
			c := cells{model: md.s, turns: "—", stop: "—"}
			c.id, c.w.id = cell(m.ID, 0)
			c.w.model = md.w
			if r.Finished {
				c.turns = textfmt.Count(r.Turns)
			}
			c.w.turns = width(c.turns)
			if r.Stop != "" {
				c.stop, c.w.stop = cell(r.Stop, 20)
			} else {
				c.w.stop = width(c.stop)
			}
			all[i] = c
			wd.id = max(wd.id, c.w.id)
			wd.model = max(wd.model, c.w.model)
			wd.turns = max(wd.turns, c.w.turns)
			wd.stop = max(wd.stop, c.w.stop)
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
			b = appendSpaces(append(b, c.id...), wd.id+2-c.w.id)
			b = appendMinute(b, r.Meta.CreatedAt.In(zone))
			b = append(b, "  "...)
			b = appendPad(b, r.kind, kindW+2)
			b = appendSpaces(append(b, c.model...), wd.model+2-c.w.model)
			b = appendSpaces(b, wd.turns-c.w.turns)
			b = append(b, c.turns...)
			b = append(b, "  "...)
			b = appendSpaces(append(b, c.stop...), wd.stop+2-c.w.stop)
			title, _ := cell(r.Meta.Title, 70)
			b = append(b, title...)
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

// cell is textfmt.Clip(textfmt.VisibleLine(s), n) (n < 1: not clipped)
// and its width.
func cell(s string, n int) (string, int) {
	c := textfmt.VisibleLine(s)
	if n > 0 {
		c = textfmt.Clip(c, n)
	}
	return c, width(c)
}

func pad(s string, n int) string { return s + strings.Repeat(" ", max(n-width(s), 0)) }

func padLeft(s string, n int) string { return strings.Repeat(" ", max(n-width(s), 0)) + s }
