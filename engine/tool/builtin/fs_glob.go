package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/mecha-agent/mecha/engine/tool"
)

// Limits of fs_glob.
const (
	DefaultGlobResults = 500
	MaxGlobResults     = 5000
)

const fsGlobDescription = `Find files in the workspace by path pattern.

The pattern is matched against each path from path (default ".", the workspace root): * and ? match within one path element, ** any number of directories ("**/*.go": Go files at any depth; "*.go": only those directly in path), [abc] and {a,b} as in a shell; a pattern ending in "/" matches directories only. The result is the matching paths relative to the workspace, one per line, sorted by path; directories end with "/". .git and what the workspace's .gitignore files exclude are skipped, unless named by path or by the fixed start of the pattern ("build/**/*.o" searches build even when it is ignored); symbolic links are listed but not followed. At most max_results paths are shown (default 500, at most 5000), within the output size limit; a last line in square brackets says how many matched when some were left out. A name that is not UTF-8 is written as fs_list writes it.`

var fsGlobSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "pattern": {"type": "string", "description": "Glob matched against paths from path, e.g. \"**/*.go\" or \"cmd/*/main.go\"."},
    "path": {"type": "string", "description": "Directory to search, relative to the workspace or absolute inside it. Default \".\", the workspace root."},
    "max_results": {"type": "integer", "minimum": 1, "maximum": 5000, "description": "Show at most this many paths. Default 500."}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`)

type fsGlobParams struct {
	Pattern    string `json:"pattern"`
	Path       string `json:"path"`
	MaxResults *int   `json:"max_results"`
}

type fsGlob struct {
	ws   Workspace
	opts Options
}

// NewFSGlob returns the fs_glob tool.
func NewFSGlob(ws Workspace, opts Options) tool.Tool {
	return &fsGlob{ws: ws, opts: opts.withDefaults()}
}

func (t *fsGlob) Spec() tool.Spec {
	return tool.Spec{Name: NameFSGlob, Description: fsGlobDescription, InputSchema: fsGlobSchema}
}

func (t *fsGlob) Capabilities() tool.Capabilities {
	return tool.Capabilities{ReadsWorkspace: true, UntrustedWorkspace: t.opts.UntrustedWorkspace}
}

func (t *fsGlob) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSGlob, err)
	}
	var p fsGlobParams
	if err := decodeInput(input, &p, "pattern", "path", "max_results"); err != nil {
		return errorResult("%v", err), nil
	}
	if p.Pattern == "" {
		return errorResult("%v", missing("pattern")), nil
	}
	if p.Path == "" {
		p.Path = "."
	}
	max := DefaultGlobResults
	if p.MaxResults != nil {
		if *p.MaxResults < 1 || *p.MaxResults > MaxGlobResults {
			return errorResult("invalid input: max_results must be between 1 and %d, got %d", MaxGlobResults, *p.MaxResults), nil
		}
		max = *p.MaxResults
	}
	pattern := strings.TrimPrefix(p.Pattern, "./")
	// "dir/" matches directories only, as in a shell.
	pattern, dirsOnly := strings.CutSuffix(pattern, "/")
	if !doublestar.ValidatePattern(pattern) {
		return errorResult("invalid input: pattern %q is not a valid glob", p.Pattern), nil
	}
	if strings.HasPrefix(pattern, "/") || hasDotDot(pattern) {
		return errorResult("invalid input: pattern %q must be relative to path, without \"..\" (set path to search elsewhere)", p.Pattern), nil
	}
	name, err := t.ws.name(p.Path)
	if err != nil {
		return nameFailed(err)
	}
	fi, err := t.ws.fs.Stat(name)
	if err != nil {
		return failure(p.Path, "", err), nil
	}
	if !fi.IsDir() {
		return errorResult("%s is not a directory; fs_glob searches a directory", p.Path), nil
	}
	// The walk starts where the pattern's fixed part leads, and goes no
	// deeper than its other elements can match without **.
	base, rest := doublestar.SplitPattern(pattern)
	start := name
	if base != "." {
		start = name + "/" + base
	}
	dir, err := t.ws.fs.OpenRoot(start)
	if pe := refused(display(start), err); pe != nil {
		return errorResult("%v", pe), nil
	}
	l := &globList{max: max, maxBytes: t.opts.MaxResultBytes, dirsOnly: dirsOnly}
	if err != nil {
		// A fixed start that does not exist (or is no directory) matches
		// nothing.
		return tool.Result{Content: l.String()}, nil
	}
	defer dir.Close()
	if err := t.walk(ctx, dir, start, base, pattern, rest, l); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSGlob, err)
	}
	return tool.Result{Content: l.String()}, nil
}

// walk lists into l what matches pattern under dir, the directory start
// of the workspace, where base (from the search's path) leads; rest is the
// pattern past base.
func (t *fsGlob) walk(ctx context.Context, dir *os.Root, start, base, pattern, rest string, l *globList) error {
	w := &walker{ctx: ctx, skip: t.ws.protected}
	if !strings.Contains(rest, "**") {
		w.maxDepth = strings.Count(rest, "/") + 1
	}
	prefix := ""
	if base != "." {
		prefix = base + "/"
	}
	w.visit = func(e walkEntry) error {
		if ok, _ := doublestar.Match(pattern, prefix+e.rel); ok {
			l.add(e.path, e.typ)
		}
		return nil
	}
	w.start(t.ws, start)
	err := w.walk(dir, shownDir(start), splitName(start))
	l.unreadable = w.unreadableNote()
	return err
}

// hasDotDot reports whether a pattern has a ".." element.
func hasDotDot(pattern string) bool {
	for _, el := range strings.Split(pattern, "/") {
		if el == ".." {
			return true
		}
	}
	return false
}

// globList is fs_glob's result: the first paths that fit, and a count of
// all that matched.
type globList struct {
	max, maxBytes int
	dirsOnly      bool
	b             strings.Builder
	shown, total  int
	full          string // why paths were left out
	unreadable    string
}

func (l *globList) add(path string, typ fs.FileMode) {
	if l.dirsOnly && !typ.IsDir() {
		return
	}
	l.total++
	if l.full != "" {
		return
	}
	if typ.IsDir() {
		path += "/"
	}
	switch {
	case l.shown == l.max:
		l.full = fmt.Sprintf("max_results=%d", l.max)
	case l.b.Len()+len(path)+1 > l.maxBytes:
		l.full = fmt.Sprintf("the %d-byte output limit", l.maxBytes)
	default:
		l.b.WriteString(path)
		l.b.WriteByte('\n')
		l.shown++
	}
}

func (l *globList) String() string {
	switch {
	case l.total == 0:
		return "[no matches" + l.unreadable + "]"
	case l.full != "":
		return l.b.String() + fmt.Sprintf("[showing the first %d of %d matching paths: stopped at %s; narrow the pattern or path%s]",
			l.shown, l.total, l.full, l.unreadable)
	case l.unreadable != "":
		return l.b.String() + "[" + strings.TrimPrefix(l.unreadable, "; ") + "]"
	}
	return l.b.String()
}
