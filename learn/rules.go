package learn

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/aymanbagabas/go-udiff"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/transcript"
)

// MaxRules is the most rules one distillation yields.
const MaxRules = 20

// Rule is one learned rule: its text, the reflections it was drawn from,
// and whether one of them read private data.
type Rule struct {
	Text    string   `json:"text"`
	From    []string `json:"from"`
	Private bool     `json:"private"`
}

// sourceRef is the reference a distilling model ends a rule with:
// "(from: ID, ID)", tolerating brackets, a missing colon and any case.
var sourceRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)[(\[]\s*(?:from|sources?)\s*:?\s*([^()\[\]]*)[)\]]\s*\.?\s*$`)
})

// ParseDistilled reads a distilling model's answer: each line beginning
// "- " is a rule, ending with the reflections it came from. Ids the batch
// did not keep are ignored; a rule that names none of the kept ones is
// taken to come from all of them, so that it is private when any of them
// is (a model's forgetfulness never makes a rule look cleaner than its
// sources). Rules are deduplicated and at most MaxRules are kept.
func ParseDistilled(md string, b Batch) []Rule {
	kept := map[string]bool{}
	var all []string
	for _, k := range b.Kept {
		if len(k.Rules) > 0 {
			kept[k.ID] = k.Private
			all = append(all, k.ID)
		}
	}
	var out []Rule
	seen := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		t, ok := bullet(line)
		if !ok {
			continue
		}
		var from []string
		if m := sourceRef().FindStringSubmatchIndex(t); m != nil {
			for _, id := range strings.FieldsFunc(t[m[2]:m[3]], func(r rune) bool { return r == ',' || r == ' ' || r == ';' || r == '`' }) {
				if _, ok := kept[id]; ok && !slices.Contains(from, id) {
					from = append(from, id)
				}
			}
			t = strings.TrimSpace(t[:m[0]])
		}
		t = textfmt.Clip(sanitize(t), MaxRuleChars)
		if t == "" || seen[strings.ToLower(t)] {
			continue
		}
		seen[strings.ToLower(t)] = true
		if len(from) == 0 {
			from = all
		}
		r := Rule{Text: t, From: from}
		for _, id := range from {
			r.Private = r.Private || kept[id]
		}
		out = append(out, r)
		if len(out) == MaxRules {
			break
		}
	}
	return out
}

// sanitize keeps a rule's text from opening or closing an HTML comment,
// which could hide or forge the comment that marks its provenance.
func sanitize(t string) string {
	t = strings.ReplaceAll(t, "<!--", "")
	t = strings.ReplaceAll(t, "-->", "")
	return strings.TrimSpace(textfmt.OneLine(t))
}

// mark is the comment that ends a rule line mecha wrote:
// "<!-- mecha: private; from: ID, ID -->".
var mark = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`<!--\s*mecha:([^>]*?)-->\s*$`) })

// Line is how a rule is written in learned_rules.md.
func (r Rule) Line() string {
	var fields []string
	if r.Private {
		fields = append(fields, "private")
	}
	fields = append(fields, "from: "+strings.Join(r.From, ", "))
	return fmt.Sprintf("- %s <!-- mecha: %s -->", sanitize(r.Text), strings.Join(fields, "; "))
}

// parseRule reads a line of learned_rules.md as a rule; ok is false for a
// line that is not one (it is kept as it is). A rule a person wrote
// without mecha's comment has no sources and is not private.
func parseRule(line string) (Rule, bool) {
	t, ok := bullet(line)
	if !ok {
		return Rule{}, false
	}
	var r Rule
	if m := mark().FindStringSubmatchIndex(t); m != nil {
		for _, f := range strings.Split(t[m[2]:m[3]], ";") {
			f = strings.TrimSpace(f)
			if strings.EqualFold(f, "private") {
				r.Private = true
			} else if ids, ok := strings.CutPrefix(f, "from:"); ok {
				for _, id := range strings.Split(ids, ",") {
					if id = strings.TrimSpace(id); id != "" {
						r.From = append(r.From, id)
					}
				}
			}
		}
		t = strings.TrimSpace(t[:m[0]])
	}
	r.Text = t
	return r, t != ""
}

// PromptPrivate reports whether a system prompt holds a learned rule
// marked private: a run with such a prompt starts private.
func PromptPrivate(prompt string) bool {
	for _, line := range strings.Split(prompt, "\n") {
		if r, ok := parseRule(line); ok && r.Private {
			return true
		}
	}
	return false
}

// PromptWhy says where the taint of a private learned rule came from, for
// the interlock's messages.
const PromptWhy = "the system prompt's learned rules from private sessions"

// PromptTaint is the taint a run starts from, t (why says where it came
// from), with what its system prompt brings: private when the prompt holds
// a learned rule marked private, as if the run had read the data the rule
// was drawn from.
func PromptTaint(t transcript.Taint, why string, prompt *string) (transcript.Taint, string) {
	if prompt == nil || t.Private || !PromptPrivate(*prompt) {
		return t, why
	}
	if !t.Clean() {
		why += "; " + PromptWhy
	} else {
		why = PromptWhy
	}
	t.Private = true
	return t, why
}

// File is learned_rules.md: plain Markdown, read tolerantly. Lines that are
// not rules (headings, prose, blank lines) are kept as they are.
type File struct {
	lines []string
}

// ParseFile reads the text of learned_rules.md.
func ParseFile(text string) *File {
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return &File{}
	}
	return &File{lines: strings.Split(text, "\n")}
}

// String is the file's text, ending in a newline unless empty.
func (f *File) String() string {
	if len(f.lines) == 0 {
		return ""
	}
	return strings.Join(f.lines, "\n") + "\n"
}

// Rules are the file's rules in order; --list numbers them from 1.
func (f *File) Rules() []Rule {
	var out []Rule
	for _, l := range f.lines {
		if r, ok := parseRule(l); ok {
			out = append(out, r)
		}
	}
	return out
}

// Add appends the rules whose text the file does not hold yet (compared
// without regard to case) and returns how many it added.
func (f *File) Add(rules []Rule) int {
	have := map[string]bool{}
	for _, r := range f.Rules() {
		have[strings.ToLower(r.Text)] = true
	}
	n := 0
	for _, r := range rules {
		if k := strings.ToLower(sanitize(r.Text)); k != "" && !have[k] {
			have[k] = true
			f.lines = append(f.lines, r.Line())
			n++
		}
	}
	return n
}

// Forget removes rule n (from 1, as Rules numbers them) and returns it.
func (f *File) Forget(n int) (Rule, error) {
	seen := 0
	for i, l := range f.lines {
		r, ok := parseRule(l)
		if !ok {
			continue
		}
		if seen++; seen == n {
			f.lines = slices.Delete(f.lines, i, i+1)
			return r, nil
		}
	}
	return Rule{}, fmt.Errorf("no rule %d: learned_rules.md has %d", n, seen)
}

// Diff is a unified diff from one text of the file to another ("" when
// they are the same).
func Diff(before, after, name string) string {
	return udiff.Unified("a/"+name, "b/"+name, before, after)
}
