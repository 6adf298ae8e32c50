package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/mecha-agent/mecha/engine/tool"
)

// MaxListDepth is the largest depth fs_list accepts.
const MaxListDepth = 5

const fsListDescription = `List a directory in the workspace.

Entries are sorted by name, one per line, as paths relative to the workspace (ready to pass to other tools). Directories end with "/"; symbolic links are shown as "name -> target" and not followed. depth 1 (the default) lists the directory's own entries; depth 2 also lists the entries of its subdirectories, and so on up to 5. .git directories are skipped. A long listing is cut, with a last line saying how many entries were omitted. A name that is not UTF-8 shows each byte that is not part of a character as \xHH, and every backslash in a name as \\; the file tools read a path written so back into the same name.`

var fsListSchema = json.RawMessage(`{
  "type": "object",
  "properties": {
    "path": {"type": "string", "description": "Directory path, relative to the workspace or absolute inside it. Default \".\", the workspace root."},
    "depth": {"type": "integer", "minimum": 1, "maximum": 5, "description": "How many levels to list. Default 1."}
  },
  "additionalProperties": false
}`)

type fsListParams struct {
	Path  string `json:"path"`
	Depth *int   `json:"depth"`
}

type fsList struct {
	ws   Workspace
	opts Options
}

// NewFSList returns the fs_list tool.
func NewFSList(ws Workspace, opts Options) tool.Tool {
	return &fsList{ws: ws, opts: opts.withDefaults()}
}

func (t *fsList) Spec() tool.Spec {
	return tool.Spec{Name: NameFSList, Description: fsListDescription, InputSchema: fsListSchema}
}

func (t *fsList) Capabilities() tool.Capabilities {
	return tool.Capabilities{ReadsWorkspace: true, UntrustedWorkspace: t.opts.UntrustedWorkspace}
}

func (t *fsList) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSList, err)
	}
	var p fsListParams
	if err := decodeInput(input, &p, "path", "depth"); err != nil {
		return errorResult("%v", err), nil
	}
	if p.Path == "" {
		p.Path = "."
	}
	depth := 1
	if p.Depth != nil {
		if *p.Depth < 1 || *p.Depth > MaxListDepth {
			return errorResult("invalid input: depth must be between 1 and %d, got %d", MaxListDepth, *p.Depth), nil
		}
		depth = *p.Depth
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
		return errorResult("%s is not a directory; use fs_read to read a file", p.Path), nil
	}
	// The directory is opened as a root of its own, and so is each
	// subdirectory listed: entries are looked up in the directory they
	// were read from, never again by a path from the workspace root.
	dir, err := t.ws.fs.OpenRoot(name)
	if err != nil {
		return failure(p.Path, "", err), nil
	}
	defer dir.Close()
	entries, err := readDir(dir)
	if err != nil {
		return errorResult("%s", pathErr(p.Path, err)), nil
	}
	l := &lister{ctx: ctx, max: t.opts.MaxResultBytes, depth: depth}
	prefix := display(name) + "/"
	if prefix == "./" {
		prefix = ""
	}
	l.list(dir, prefix, entries, 1)
	if err := ctx.Err(); err != nil {
		return tool.Result{}, fmt.Errorf("builtin: %s: %w", NameFSList, err)
	}
	return tool.Result{Content: l.String()}, nil
}

// readDir returns the entries of the root directory of r sorted by name.
func readDir(r *os.Root) ([]fs.DirEntry, error) {
	f, err := r.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// lister accumulates listing lines within a byte budget and counts the
// entries that did not fit.
type lister struct {
	ctx     context.Context
	max     int
	depth   int
	b       strings.Builder
	shown   int
	omitted int
}

// list adds entries, those of the directory dir, and those of their
// subdirectories down to l.depth.
func (l *lister) list(dir *os.Root, prefix string, entries []fs.DirEntry, level int) {
	for _, e := range entries {
		if l.ctx.Err() != nil {
			return
		}
		name := e.Name()
		if name == ".git" {
			continue
		}
		rel := prefix + encodeName(name)
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			target, err := dir.Readlink(name)
			if err != nil {
				target = "?"
			}
			l.add(rel + " -> " + encodeName(target))
		case e.IsDir():
			l.add(rel + "/")
			if level < l.depth {
				l.sub(dir, name, rel, level)
			}
		default:
			l.add(rel)
		}
	}
}

// sub lists the subdirectory name of dir.
func (l *lister) sub(dir *os.Root, name, rel string, level int) {
	cannot := func(err error) {
		l.add(fmt.Sprintf("[cannot list %s/: %s]", rel, strings.TrimPrefix(pathErr("", err), ": ")))
	}
	sub, err := dir.OpenRoot(name)
	if err != nil {
		cannot(err)
		return
	}
	defer sub.Close()
	entries, err := readDir(sub)
	if err != nil {
		cannot(err)
	}
	l.list(sub, rel+"/", entries, level+1)
}

func (l *lister) add(line string) {
	if l.omitted > 0 || l.b.Len()+len(line)+1 > l.max {
		l.omitted++
		return
	}
	l.b.WriteString(line)
	l.b.WriteByte('\n')
	l.shown++
}

func (l *lister) String() string {
	if l.shown == 0 && l.omitted == 0 {
		return "[empty directory]"
	}
	if l.omitted == 0 {
		return l.b.String()
	}
	return l.b.String() + fmt.Sprintf("[... %d more entries omitted (%d shown): the %d-byte output limit was reached; list a subdirectory or use a smaller depth]",
		l.omitted, l.shown, l.max)
}
