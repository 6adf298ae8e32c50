package sessionview

import (
	"fmt"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/transcript"
)

func atSuffix(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "  " + t.UTC().Format("15:04:05")
}

func showValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "—"
	case string:
		if v == "" {
			return `""`
		}
		return vis(v)
	case []any:
		var s []string
		for _, e := range v {
			s = append(s, showValue(e))
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	return vis(fmt.Sprint(v))
}

// vis is text from a transcript shown on one line: nothing in it a
// terminal would act on (textfmt.Visible), white space folded.
func vis(s string) string { return textfmt.VisibleLine(s) }

// flagValue shows a flag setting as a config record holds it: on, off, or
// "—" for null (a setting the provider did not take).
func flagValue(v any) string {
	if b, ok := v.(bool); ok {
		return onOff(b)
	}
	return "—"
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func taintWords(t transcript.Taint) string {
	switch {
	case t.Private && t.Untrusted:
		return "private, untrusted"
	case t.Private:
		return "private"
	case t.Untrusted:
		return "untrusted"
	}
	return "clean"
}

// ShowValue writes a setting's value for a person: "—" for none, a
// string as it is, a list in brackets.
func ShowValue(v any) string { return showValue(v) }

// TaintWords names a taint state: clean, private, untrusted, or both.
func TaintWords(t transcript.Taint) string { return taintWords(t) }
