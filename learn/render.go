package learn

import (
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Bounds of a rendering.
const (
	// DefaultLimit is the size a rendering aims to stay under, in bytes.
	DefaultLimit = 48 << 10
	// clipText bounds one text block, clipResult one tool result and
	// clipInput one call's arguments, in characters.
	clipText   = 1200
	clipResult = 400
	clipInput  = 200
)

// Rendered is a session as a reflecting model reads it.
type Rendered struct {
	Text string
	// Shown are the indexes (from 0, in file order, as sessions show
	// numbers them) of the messages the text holds, ascending.
	Shown []int
	// Omitted counts the messages left out to stay under the limit.
	Omitted int
}

// Render writes s compactly: its title, each message under its index
// (texts, calls with clipped arguments, results with clipped content,
// errors, denials and refusals marked), and each run's summary. When the
// whole would pass limit bytes, messages are left out from the middle
// (the task and the end are what a reflection most needs) and the text
// says how many.
func Render(s *session.Session, limit int) Rendered {
	msgs := s.Messages()
	parts := make([]string, len(msgs))
	size := 0
	for i, m := range msgs {
		parts[i] = renderMessage(i, m)
		size += len(parts[i])
	}
	keep := make([]bool, len(msgs))
	for i := range keep {
		keep[i] = true
	}
	// Leave out messages from the middle, newest-but-last first, until the
	// rest fits; the first message (the task) and the last stay.
	for mid := len(msgs) - 2; size > limit && mid >= 1; mid-- {
		keep[mid] = false
		size -= len(parts[mid])
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Session %s: %s\n", s.Meta.ID, textfmt.Clip(textfmt.OneLine(s.Meta.Title), 200))
	var r Rendered
	gap := 0
	for i := range msgs {
		if !keep[i] {
			gap++
			continue
		}
		if gap > 0 {
			fmt.Fprintf(&b, "\n[%d %s left out]\n", gap, textfmt.Plural(gap, "message", "messages"))
			r.Omitted += gap
			gap = 0
		}
		b.WriteString(parts[i])
		r.Shown = append(r.Shown, i)
	}
	for _, sum := range s.Summaries() {
		fmt.Fprintf(&b, "\n[run finished: %d %s, %s", sum.Turns, textfmt.Plural(sum.Turns, "turn", "turns"), sum.StopReason)
		if sum.Error != "" {
			fmt.Fprintf(&b, ", error: %s", textfmt.Clip(textfmt.OneLine(sum.Error), clipResult))
		}
		b.WriteString("]\n")
	}
	r.Text = b.String()
	return r
}

// renderMessage renders one message under its index.
func renderMessage(i int, m *transcript.Message) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n#%d %s:\n", i, m.Role)
	for _, bl := range m.Content {
		switch bl.Type {
		case transcript.BlockText:
			if t := strings.TrimSpace(bl.Text); t != "" {
				b.WriteString(textfmt.Clip(t, clipText) + "\n")
			}
		case transcript.BlockToolUse:
			fmt.Fprintf(&b, "→ call %s %s\n", bl.Name, textfmt.JSON(bl.Input, clipInput))
		case transcript.BlockToolResult:
			mark := "← ok"
			switch {
			case bl.OutcomeUnknown:
				mark = "← outcome unknown"
			case bl.IsError:
				mark = "← error"
			}
			fmt.Fprintf(&b, "%s: %s\n", mark, textfmt.Clip(textfmt.OneLine(bl.Content), clipResult))
		}
	}
	return b.String()
}

// ShownTaint is the taint of a reflection that was shown the messages at
// the indexes shown of a session with this timeline: the merge of each
// one's coverage. A shown message no checkpoint covers (or an index
// outside the timeline) is of unknown provenance, and unknown is never
// clean: the result is then private and untrusted both, and unknown counts
// such messages.
func ShownTaint(timeline []session.Coverage, shown []int) (t transcript.Taint, unknown int) {
	for _, i := range shown {
		if i < 0 || i >= len(timeline) || !timeline[i].Known {
			unknown++
			continue
		}
		t = t.Merge(timeline[i].Taint)
	}
	if unknown > 0 {
		t = transcript.Taint{Private: true, Untrusted: true}
	}
	return t, unknown
}
