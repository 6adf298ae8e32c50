package tool

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
)

// Rule is a saved permission rule, written as Claude Code writes them:
// a tool's name alone ("web_fetch", or "mcp__SERVER" for every tool of a
// server) or with a pattern in parentheses that the call's subject must
// match: "shell(go test ./...)", "shell(git status*)", "fs_write(docs/**)",
// "web_fetch(https://pkg.go.dev/*)".
//
// The subject of a shell call is its command, of web_fetch its URL (both
// matched whole, * standing for any text); of a file tool (fs_read,
// fs_list, fs_write, fs_edit, fs_grep, fs_glob) its path, relative to the
// workspace and cleaned ("docs/../x" is "x"), matched as a doublestar glob
// (* within a directory, ** across them). Other tools take no pattern.
type Rule struct {
	Tool    string
	Pattern string // "" for a bare tool name
	// Source is where the rule was read (config.toml, a workspace's
	// .mecha/permissions.toml, ...), for messages and the record.
	Source string
	re     *regexp.Regexp // the pattern of a shell or web_fetch rule
}

// subjects are the input fields rules match against, by tool.
var subjects = map[string]string{
	"shell": "command", "web_fetch": "url",
	"fs_read": "path", "fs_list": "path", "fs_write": "path", "fs_edit": "path", "fs_grep": "path", "fs_glob": "path",
}

// ParseRule parses one rule.
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	name, rest, hasPattern := strings.Cut(s, "(")
	r := Rule{Tool: strings.TrimSpace(name)}
	if r.Tool == "" || strings.ContainsAny(r.Tool, " )*") {
		return r, fmt.Errorf("permission rule %q: want TOOL or TOOL(PATTERN)", s)
	}
	if !hasPattern {
		return r, nil
	}
	if !strings.HasSuffix(rest, ")") || strings.TrimSpace(rest[:len(rest)-1]) == "" {
		return r, fmt.Errorf("permission rule %q: want TOOL(PATTERN), the pattern not empty", s)
	}
	r.Pattern = rest[:len(rest)-1]
	field, ok := subjects[r.Tool]
	switch {
	case !ok:
		return r, fmt.Errorf("permission rule %q: %s takes no pattern (only shell, web_fetch and the fs_ tools do): write %s alone", s, r.Tool, r.Tool)
	case field == "path":
		if !doublestar.ValidatePattern(r.Pattern) {
			return r, fmt.Errorf("permission rule %q: %q is not a valid glob", s, r.Pattern)
		}
	default:
		parts := strings.Split(r.Pattern, "*")
		for i := range parts {
			parts[i] = regexp.QuoteMeta(parts[i])
		}
		r.re = regexp.MustCompile(`\A` + strings.Join(parts, `(?s:.*)`) + `\z`)
	}
	return r, nil
}

// String is the rule as it is written.
func (r Rule) String() string {
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + "(" + r.Pattern + ")"
}

// Rules are the saved rules a gate applies, with the workspace their
// paths are relative to. Deny wins: a call a deny rule matches is never
// run, whatever the mode, an allow rule or an answer; a call an allow
// rule matches runs without asking in the ask mode (read-only still
// refuses it). An allow rule never matches a shell command holding one of
// ; & | < > ` $ ( ) or a line break: a compound command, a redirection or
// a substitution is asked about, so that "shell(git status*)" does not
// allow "git status; rm -rf ~". A deny rule for the shell matches the
// whole command or any of the simple commands it chains; a shell can
// spell a command many ways, so the sure deny of the shell is "shell".
type Rules struct {
	Allow, Deny []Rule
	Workspace   string
}

// ParseRules parses allow and deny lists read from source.
func ParseRules(allow, deny []string, source string) (Rules, error) {
	var rs Rules
	for _, l := range []struct {
		in  []string
		out *[]Rule
	}{{allow, &rs.Allow}, {deny, &rs.Deny}} {
		for _, s := range l.in {
			r, err := ParseRule(s)
			if err != nil {
				return rs, fmt.Errorf("%s: %w", source, err)
			}
			r.Source = source
			*l.out = append(*l.out, r)
		}
	}
	return rs, nil
}

// Add appends o's rules to rs.
func (rs *Rules) Add(o Rules) {
	rs.Allow = append(rs.Allow, o.Allow...)
	rs.Deny = append(rs.Deny, o.Deny...)
}

// Empty reports whether there is no rule.
func (rs *Rules) Empty() bool { return rs == nil || len(rs.Allow) == 0 && len(rs.Deny) == 0 }

// Denies returns the deny rule matching a call of name with input, if any.
func (rs *Rules) Denies(name string, input json.RawMessage) (Rule, bool) {
	if rs == nil {
		return Rule{}, false
	}
	for _, r := range rs.Deny {
		if rs.matches(r, name, input, false) {
			return r, true
		}
	}
	return Rule{}, false
}

// Allows returns the allow rule matching a call of name with input, if any.
func (rs *Rules) Allows(name string, input json.RawMessage) (Rule, bool) {
	if rs == nil {
		return Rule{}, false
	}
	for _, r := range rs.Allow {
		if rs.matches(r, name, input, true) {
			return r, true
		}
	}
	return Rule{}, false
}

func (rs *Rules) matches(r Rule, name string, input json.RawMessage, allow bool) bool {
	if r.Tool != name && !(strings.HasPrefix(r.Tool, "mcp__") && strings.HasPrefix(name, r.Tool+"__")) {
		return false
	}
	if r.Pattern == "" {
		return true
	}
	field := subjects[name]
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	subject, _ := in[field].(string)
	if field == "path" {
		if subject == "" {
			subject = "."
		}
		return rs.pathMatches(r.Pattern, subject, allow)
	}
	if name != "shell" {
		return r.re.MatchString(subject)
	}
	if allow {
		return !strings.ContainsAny(subject, shellSpecial) && r.re.MatchString(strings.TrimSpace(subject))
	}
	if r.re.MatchString(strings.TrimSpace(subject)) {
		return true
	}
	for _, part := range shellSplit().Split(subject, -1) {
		if r.re.MatchString(strings.TrimSpace(part)) {
			return true
		}
	}
	return false
}

// shellSpecial are the characters that make a command more than one
// simple command; shellSplit splits a command at them (for deny rules).
const shellSpecial = ";&|<>`$()\n\r"

var shellSplit = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("&&|\\|\\||[;&|\n\r`()]|\\$\\(") })

// pathMatches matches a file tool's path against a glob: the path as
// written, cleaned and made relative to the workspace, and the file it
// reaches once symbolic links inside the workspace are followed. An allow
// rule needs both to match (a link under docs/ to src/main.go is not
// docs/**); a deny rule either.
func (rs *Rules) pathMatches(pattern, p string, allow bool) bool {
	rels := rs.relPaths(p)
	if len(rels) == 0 {
		return false
	}
	for _, rel := range rels {
		ok, _ := doublestar.Match(pattern, rel)
		if ok && !allow {
			return true
		}
		if !ok && allow {
			return false
		}
	}
	return allow
}

// relPaths are p relative to the workspace, as written and as resolved;
// none when p is outside it.
func (rs *Rules) relPaths(p string) []string {
	ws := rs.Workspace
	if ws == "" {
		return nil
	}
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(ws, p)
	}
	rel, err := filepath.Rel(ws, filepath.Clean(abs))
	if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
		return nil
	}
	out := []string{filepath.ToSlash(rel)}
	// The deepest part of the path that exists, with its links followed;
	// the rest appended as written.
	realWS, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return out
	}
	head, tail := filepath.Clean(abs), ""
	for hops := 0; hops < 64; hops++ {
		if real, err := filepath.EvalSymlinks(head); err == nil {
			resolved := filepath.Join(real, tail)
			rr, err := filepath.Rel(realWS, resolved)
			if err != nil || rr == ".." || strings.HasPrefix(rr, "../") {
				return append(out, "../") // resolves outside: matches no allow glob
			}
			if rr = filepath.ToSlash(rr); rr != out[0] {
				out = append(out, rr)
			}
			return out
		} else if !os.IsNotExist(err) {
			return append(out, "../")
		}
		// A link whose target does not exist yet: a write through it
		// creates the target, so the target is where the path goes.
		if target, err := os.Readlink(head); err == nil {
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(head), target)
			}
			head = filepath.Clean(target)
			continue
		}
		parent := filepath.Dir(head)
		if parent == head {
			return out
		}
		tail = filepath.Join(filepath.Base(head), tail)
		head = parent
	}
	return append(out, "../")
}

// SuggestRule is the allow rule that would let exactly this call run
// again without asking ("shell(go test ./...)", "fs_write(docs/a.md)"),
// or false when none can be written for it: a compound shell command, a
// pattern character in the subject, a tool without a subject.
func SuggestRule(name string, input json.RawMessage, workspace string) (string, bool) {
	field, ok := subjects[name]
	if !ok || name == "web_fetch" || name == "fs_read" || name == "fs_list" || name == "fs_grep" || name == "fs_glob" {
		return "", false
	}
	var in map[string]any
	if json.Unmarshal(input, &in) != nil {
		return "", false
	}
	subject, _ := in[field].(string)
	subject = strings.TrimSpace(subject)
	if subject == "" || strings.ContainsAny(subject, "*") || strings.ContainsAny(subject, "()") {
		return "", false
	}
	if field == "command" {
		if strings.ContainsAny(subject, shellSpecial) {
			return "", false
		}
	} else {
		rs := Rules{Workspace: workspace}
		rels := rs.relPaths(subject)
		if len(rels) == 0 || strings.ContainsAny(rels[0], `?[]{}\`) {
			return "", false
		}
		subject = rels[0]
	}
	s := name + "(" + subject + ")"
	if _, err := ParseRule(s); err != nil {
		return "", false
	}
	return s, true
}
