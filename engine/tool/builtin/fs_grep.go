package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mecha-agent/mecha/engine/tool"
)

// Limits of fs_grep.
const (
	DefaultGrepMatches = 100
	MaxGrepMatches     = 1000
	// maxGrepLine is how much of a matching line a result shows.
	maxGrepLine = 500
)

const fsGrepDescription = `Search the contents of files in the workspace with a regular expression (Go's RE2 syntax: no backreferences or lookaround).

Each matching line is one result line, path:line:text, with the path relative to the workspace (ready to pass to fs_read) and lines numbered from 1; files in name order, depth first. The pattern is matched line by line: ^ and $ are the start and end of a line. path (default ".", the whole workspace) is a directory to search or one file. glob keeps only the files it matches: without "/" it is matched against the file's name ("*.go"), with one against its path from path ("cmd/**/*.go"); ** matches any number of directories. ignore_case makes the match case-insensitive.

.git, what the workspace's .gitignore files exclude, binary files (with a NUL byte) and symbolic links met on the way are skipped; a path named explicitly is searched even when ignored. A line longer than 500 bytes is cut. The output stops at max_matches matching lines (default 100, at most 1000) or at the output size limit, and a last line in square brackets says how many matched and in how many files, whether it stopped early, and what was skipped. A name that is not UTF-8 is written as fs_list writes it.`

var fsGrepSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Regular expression (RE2 syntax), matched against each line."},
    "path": {"type": "string", "description": "Directory or file to search, relative to the workspace or absolute inside it. Default \".\", the workspace root."},
    "glob": {"type": "string", "description": "Only search files matching this glob: against the file name without \"/\" (\"*.go\"), against the path from path with one (\"cmd/**/*.go\")."},
    "ignore_case": {"type": "boolean", "description": "Match case-insensitively. Default false."},
    "max_matches": {"type": "integer", "minimum": 1, "maximum": 1000, "description": "Stop after this many matching lines. Default 100."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)

type fsGrepParams struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	Glob       string `json:"glob"`
	IgnoreCase bool   `json:"ignore_case"`
	MaxMatches *int   `json:"max_matches"`
}

type fsGrep struct {
	ws   Workspace
	opts Options
}

// NewFSGrep returns the fs_grep tool.
func NewFSGrep(ws Workspace, opts Options) tool.Tool {
	return &fsGrep{ws: ws, opts: opts.withDefaults()}
}

func (t *fsGrep) Spec() tool.Spec {
	return tool.Spec{Name: NameFSGrep, Description: fsGrepDescription, InputSchema: fsGrepSchema}
}

func (t *fsGrep) Capabilities() tool.Capabilities {
	return tool.Capabilities{ReadsWorkspace: true, UntrustedWorkspace: t.opts.UntrustedWorkspace}
}

func (t *fsGrep) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSGrep, err)
	}
	var p fsGrepParams
	if err := decodeInput(input, &p, "pattern", "path", "glob", "ignore_case", "max_matches"); err != nil {
		return errorResult("%v", err), nil
	}
	if p.Pattern == "" {
		return errorResult("%v", missing("pattern")), nil
	}
	if p.Path == "" {
		p.Path = "."
	}
	max := DefaultGrepMatches
	if p.MaxMatches != nil {
		if *p.MaxMatches < 1 || *p.MaxMatches > MaxGrepMatches {
			return errorResult("invalid input: max_matches must be between 1 and %d, got %d", MaxGrepMatches, *p.MaxMatches), nil
		}
		max = *p.MaxMatches
	}
	if p.Glob != "" && !doublestar.ValidatePattern(p.Glob) {
		return errorResult("invalid input: glob %q is not a valid pattern", p.Glob), nil
	}
	m, err := newLineMatcher(p.Pattern, p.IgnoreCase)
	if err != nil {
		return errorResult("invalid input: pattern: %v", err), nil
	}
	name, err := t.ws.name(p.Path)
	if err != nil {
		return nameFailed(err)
	}
	fi, err := t.ws.fs.Stat(name)
	if err != nil {
		return failure(p.Path, "", err), nil
	}
	out := &grepOutput{maxMatches: max, maxBytes: t.opts.MaxResultBytes}
	newSearcher := func() *searcher { return &searcher{match: m, redactor: t.opts.redactor} }
	if !fi.IsDir() {
		// One file, named explicitly: searched whatever the glob says.
		f, bad := t.ws.openRegular(p.Path, name, "")
		if bad != nil {
			return *bad, nil
		}
		lines, binary, err := newSearcher().search(f, out.need())
		f.Close()
		if err != nil {
			return errorResult("%s", pathErr(p.Path, err)), nil
		}
		out.add(display(name), lines, binary)
		return tool.Result{Content: out.result("")}, nil
	}
	dir, err := t.ws.fs.OpenRoot(name)
	if err != nil {
		return failure(p.Path, "", err), nil
	}
	defer dir.Close()
	tree := &grepTree{ws: t.ws, name: name, glob: p.Glob, out: out, newSearcher: newSearcher}
	if err := tree.search(ctx, dir); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSGrep, err)
	}
	return tool.Result{Content: out.result(tree.unreadable)}, nil
}

// globMatches reports whether glob matches the file at rel (from the
// start of the search): its name when glob has no "/", else rel.
func globMatches(glob, rel string) bool {
	if !strings.Contains(glob, "/") {
		rel = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	ok, _ := doublestar.Match(glob, rel)
	return ok
}

// grepOutput is the result of an fs_grep call, within its limits.
type grepOutput struct {
	maxMatches, maxBytes int
	b                    strings.Builder
	matches, files       int
	binary               int
	// full is why the output stopped ("" while it goes on); more that a
	// match was left out because of it.
	full string
	more bool
}

// need is how many matching lines a file may add: one more than the
// output can take, to tell whether it stopped with matches left.
func (o *grepOutput) need() int { return o.maxMatches - o.matches + 1 }

// add adds the matching lines of the file shown as path (nothing when it
// is binary); it returns false once the output is full (its limit met and
// one more match seen).
func (o *grepOutput) add(path string, lines []grepLine, binary bool) bool {
	if binary {
		o.binary++
		return true
	}
	for i, l := range lines {
		if o.full != "" {
			o.more = true
			return false
		}
		line := fmt.Sprintf("%s:%d:%s\n", path, l.n, strings.ToValidUTF8(l.String(), "\uFFFD"))
		if o.b.Len()+len(line) > o.maxBytes {
			o.full = fmt.Sprintf("the %d-byte output limit", o.maxBytes)
			o.more = true
			return false
		}
		o.b.WriteString(line)
		o.matches++
		if i == 0 {
			o.files++
		}
		if o.matches == o.maxMatches {
			o.full = fmt.Sprintf("max_matches=%d", o.maxMatches)
		}
	}
	return true
}

// result is the output with its last line: what was found, where it
// stopped, what was skipped.
func (o *grepOutput) result(unreadable string) string {
	var note string
	switch {
	case o.matches == 0:
		note = "[no matches"
	default:
		note = fmt.Sprintf("[%s in %s", plural(o.matches, "matching line"), plural(o.files, "file"))
	}
	if o.more {
		note += fmt.Sprintf("; stopped at %s, there are more: narrow the pattern, path or glob", o.full)
	}
	if o.binary > 0 {
		note += fmt.Sprintf("; %s skipped", plural(o.binary, "binary file"))
	}
	return o.b.String() + note + unreadable + "]"
}
