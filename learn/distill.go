package learn

import (
	"fmt"
	"strings"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Bounds of what a distilling model is sent.
const (
	// MaxCandidates is the most candidate rules taken from one reflection.
	MaxCandidates = 8
	// MaxRuleChars bounds one rule's text.
	MaxRuleChars = 300
)

// Verdict is what distilling does with one reflection.
type Verdict struct {
	Keep bool
	// Private is true for a kept reflection that read private data: the
	// rules drawn from it are marked private.
	Private bool
	// Why says why a reflection was dropped ("" when kept).
	Why string
}

// Judge decides by a reflection's own taint whether its text may reach a
// distilling model. Untrusted is dropped (content from outside may have
// shaped what it says), and so is unknown provenance (a message no
// checkpoint covers: a run killed before its checkpoint, an older build);
// private is kept, and marked.
func Judge(s *session.Session) Verdict {
	timeline := s.TaintTimeline()
	if len(timeline) == 0 {
		return Verdict{Why: "it holds no messages"}
	}
	unknown := 0
	for _, c := range timeline {
		if !c.Known {
			unknown++
		}
	}
	if unknown > 0 {
		return Verdict{Why: fmt.Sprintf("unknown provenance: %d %s no taint checkpoint covers", unknown, textfmt.Plural(unknown, "message", "messages"))}
	}
	t := s.Taint()
	if t.Untrusted {
		return Verdict{Why: "untrusted: the session it reflects on had brought in content from outside"}
	}
	return Verdict{Keep: true, Private: t.Private}
}

// Kept is a reflection whose candidate rules may reach the distilling model.
type Kept struct {
	ID      string   `json:"id"`
	Private bool     `json:"private"`
	Rules   []string `json:"rules"`
}

// Dropped is a reflection left out, with why.
type Dropped struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// Batch is the reflections distilling considered, split by Judge.
type Batch struct {
	Kept    []Kept
	Dropped []Dropped
}

// Collect judges each reflection (newest first) and takes the candidate
// rules of the kept ones from their last answer. Nothing of a dropped
// reflection but its id and the reason is kept: the prompt is built from
// the Batch alone, so a dropped reflection's text cannot reach the model.
func Collect(reflections []*session.Session) Batch {
	var b Batch
	for _, s := range reflections {
		v := Judge(s)
		if !v.Keep {
			b.Dropped = append(b.Dropped, Dropped{ID: s.Meta.ID, Why: v.Why})
			continue
		}
		b.Kept = append(b.Kept, Kept{ID: s.Meta.ID, Private: v.Private, Rules: Candidates(lastAnswer(s))})
	}
	return b
}

// lastAnswer is the text of the last assistant message.
func lastAnswer(s *session.Session) string {
	msgs := s.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == transcript.RoleAssistant {
			return transcript.TextOf(msgs[i].Content)
		}
	}
	return ""
}

// Rules counts the candidate rules of the kept reflections.
func (b Batch) Rules() int {
	n := 0
	for _, k := range b.Kept {
		n += len(k.Rules)
	}
	return n
}

// Taint is the taint of a distilling session shown the kept reflections:
// private when one of them is (none is untrusted or unknown).
func (b Batch) Taint() transcript.Taint {
	var t transcript.Taint
	for _, k := range b.Kept {
		t.Private = t.Private || k.Private
	}
	return t
}

// Prompt is the user message of a distilling session: the candidate rules
// of each kept reflection under its id.
func (b Batch) Prompt() string {
	var sb strings.Builder
	sb.WriteString("Candidate rules from reflections on earlier sessions, newest first:\n")
	for _, k := range b.Kept {
		if len(k.Rules) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "\nReflection %s:\n", k.ID)
		for _, r := range k.Rules {
			sb.WriteString("- " + r + "\n")
		}
	}
	return sb.String()
}

// Candidates are the candidate rules of a reflection: the lines that begin
// "- " (leading blanks allowed), their text clipped, at most MaxCandidates.
func Candidates(md string) []string {
	var out []string
	for _, line := range strings.Split(md, "\n") {
		t, ok := bullet(line)
		if !ok {
			continue
		}
		out = append(out, textfmt.Clip(t, MaxRuleChars))
		if len(out) == MaxCandidates {
			break
		}
	}
	return out
}

// bullet returns the text of a line that begins "- ", folded to one line.
func bullet(line string) (string, bool) {
	t, ok := strings.CutPrefix(strings.TrimLeft(line, " \t"), "- ")
	t = textfmt.OneLine(t)
	return t, ok && t != ""
}
