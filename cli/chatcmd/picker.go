package chatcmd

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// picker is a list to choose from above the input box (/model's models,
// /resume's sessions): typing filters it (every word must appear, case
// folded), Up and Down move, Enter chooses, Esc closes it. Items are
// visible text already.
type picker struct {
	title  string
	items  []pickItem
	filter string
	sel    int
	choose func(pickItem) tea.Cmd
	// note is said under the list (models still being asked for, say).
	note string
}

type pickItem struct {
	label, detail, value string
}

// pickerRows bounds the rows a picker shows at once.
const pickerRows = 8

// shown is the items the filter lets through.
func (p *picker) shown() []pickItem {
	words := strings.Fields(strings.ToLower(p.filter))
	var out []pickItem
	for _, it := range p.items {
		hay := strings.ToLower(it.label + " " + it.detail)
		ok := true
		for _, w := range words {
			ok = ok && strings.Contains(hay, w)
		}
		if ok {
			out = append(out, it)
		}
	}
	return out
}

// pickerKey handles a key while a picker is open.
func (m *model) pickerKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.pick
	shown := p.shown()
	switch k.String() {
	case "esc", "ctrl+c":
		m.pick = nil
	case "up", "ctrl+p":
		p.sel = max(p.sel-1, 0)
	case "down", "ctrl+n", "tab":
		p.sel = min(p.sel+1, max(len(shown)-1, 0))
	case "enter":
		if p.sel < len(shown) {
			m.pick = nil
			m.layout()
			cmd := p.choose(shown[p.sel])
			m.refresh()
			return cmd
		}
	case "backspace":
		if r := []rune(p.filter); len(r) > 0 {
			p.filter, p.sel = string(r[:len(r)-1]), 0
		}
	default:
		if k.Text != "" {
			p.filter += k.Text
			p.sel = 0
		}
	}
	m.layout()
	m.refresh()
	return nil
}

// pickerView is the open picker, "" for none.
func (m *model) pickerView() string {
	p := m.pick
	if p == nil {
		return ""
	}
	shown := p.shown()
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s\n", p.title, m.st.dim.Render("(type to filter, ↑↓ move, Enter chooses, Esc closes)"))
	fmt.Fprintf(&b, "filter: %s\n", textfmt.Visible(p.filter))
	from := 0
	if p.sel >= pickerRows {
		from = p.sel - pickerRows + 1
	}
	for i := from; i < len(shown) && i < from+pickerRows; i++ {
		mark := "  "
		if i == p.sel {
			mark = "▸ "
		}
		line := textfmt.Clip(shown[i].label+"  "+shown[i].detail, max(m.width-6, 20))
		if i == p.sel {
			line = m.st.user.Render(line)
		}
		b.WriteString(mark + line + "\n")
	}
	if len(shown) == 0 {
		b.WriteString(m.st.dim.Render("  (nothing matches)") + "\n")
	} else if len(shown) > pickerRows {
		b.WriteString(m.st.dim.Render(fmt.Sprintf("  (%d of %d; type to narrow)", min(pickerRows, len(shown)), len(shown))) + "\n")
	}
	if p.note != "" {
		b.WriteString(m.st.dim.Render(p.note) + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
