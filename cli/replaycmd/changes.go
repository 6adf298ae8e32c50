package replaycmd

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/redrive/replay"
)

// maxDiffLines bounds a diff in the text report; --json and --html have
// it whole.
const maxDiffLines = 40

// printChanges opens a report with what differs between each recorded
// attach's request and the replay's, field by field: a prompt or a spec
// as a unified diff, the tools offered as the names added and removed, a
// setting as its two values.
func printChanges(w io.Writer, changes []replay.RequestChange) {
	if len(changes) == 0 {
		return
	}
	several := changes[0].Attach != changes[len(changes)-1].Attach
	attach := 0
	for _, c := range changes {
		if c.Attach != attach {
			attach = c.Attach
			if several {
				fmt.Fprintf(w, "changed since the recording, attach %d:\n", attach)
			} else {
				fmt.Fprintln(w, "changed since the recording:")
			}
		}
		switch c.Field {
		case replay.FieldSystemPrompt:
			fmt.Fprintln(w, "  system prompt:")
			printDiff(w, c.Diff)
		case replay.FieldTools:
			var parts []string
			if len(c.Added) > 0 {
				parts = append(parts, "added "+strings.Join(c.Added, ", "))
			}
			if len(c.Removed) > 0 {
				parts = append(parts, "removed "+strings.Join(c.Removed, ", "))
			}
			if len(parts) == 0 {
				parts = append(parts, "the same tools in another order")
			}
			fmt.Fprintf(w, "  tools offered: %s\n", textfmt.VisibleLine(strings.Join(parts, "; ")))
		case replay.FieldToolSpec:
			fmt.Fprintf(w, "  tool %s: %s changed; the model was offered today's\n", textfmt.VisibleLine(c.Tool),
				strings.ReplaceAll(strings.Join(c.Changed, " and "), "_", " "))
			printDiff(w, c.Diff)
		default:
			fmt.Fprintf(w, "  %s: %s → %s\n", c.Field, value(c.Recorded), value(c.Now))
		}
	}
}

// printDiff writes a unified diff indented, at most maxDiffLines lines.
func printDiff(w io.Writer, diff string) {
	lines := strings.Split(strings.TrimSuffix(diff, "\n"), "\n")
	for i, l := range lines {
		if i == maxDiffLines {
			fmt.Fprintf(w, "    … %d more lines (--json and --html have the whole diff)\n", len(lines)-i)
			return
		}
		fmt.Fprintf(w, "    %s\n", textfmt.Visible(l))
	}
}

// value shows a recorded or current setting: null for none.
func value(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return textfmt.VisibleLine(fmt.Sprint(v))
	}
	return textfmt.VisibleLine(textfmt.Clip(string(b), 120))
}

// ChangePhrase names a request change (by RequestChange.Name) for a
// person: "system prompt", "fs_read's spec", "temperature".
func ChangePhrase(name string) string {
	field, tool, _ := strings.Cut(name, ":")
	switch field {
	case replay.FieldSystemPrompt:
		return "system prompt"
	case replay.FieldTools:
		return "tools offered"
	case replay.FieldToolSpec:
		return textfmt.VisibleLine(tool) + "'s spec"
	}
	return field
}

// afterLine says which request changes came before a divergence, ""
// when none did.
func afterLine(after []string) string {
	if len(after) == 0 {
		return ""
	}
	phrases := make([]string, len(after))
	for i, a := range after {
		phrases[i] = ChangePhrase(a)
	}
	return "after the changes to: " + strings.Join(phrases, ", ")
}
