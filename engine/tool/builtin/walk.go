package builtin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// The search tools (fs_grep, fs_glob) walk a directory of the workspace
// the way fs_list does: each directory is opened as an os.Root of its own,
// from the one it was read in, so no entry is ever looked up again by a
// path from the workspace root and none can lead out of it. On top of
// fs_list's walk, they
//
//   - never follow a symbolic link met on the way (the path a call names
//     may go through one inside the workspace, like every file tool's);
//   - skip .git, and what the workspace's ignore files exclude: the
//     .gitignore of each directory walked and of each directory above the
//     start, and .git/info/exclude, by git's rules (the matcher is go-git's);
//     a directory or file named explicitly (the path of a call, the fixed
//     start of a glob) is searched even when ignored, and then only the
//     ignore files at and below it apply.
//
// Ignore files outside the workspace (a parent repository's, the user's
// global excludes) are not read: the tools see nothing outside it.

// maxIgnoreFile bounds an ignore file; a larger one is not read.
const maxIgnoreFile = 1 << 20

// walkEntry is one entry met by a walk.
type walkEntry struct {
	dir  *os.Root    // the directory it is in, open
	name string      // its name in dir
	rel  string      // its path from the start of the walk, "/"-separated
	path string      // its path from the workspace root, as the tools show it
	typ  fs.FileMode // its type bits, as the directory listed it
}

// walker walks a directory of the workspace depth first, entries in name
// order, calling visit for each entry that is not skipped.
type walker struct {
	ctx context.Context
	// maxDepth stops the walk below that many levels (1: the start's own
	// entries); 0 means no limit.
	maxDepth int
	// visit sees each entry; an error ends the walk with it.
	visit func(e walkEntry) error
	// patterns are the ignore patterns in force, lowest priority first.
	patterns []gitignore.Pattern
	// unreadable notes the directories and files that could not be read.
	unreadable []string
	// skip are directories not walked into, as names from the workspace
	// root (Workspace.protected).
	skip []string
}

// start prepares a walk of the directory name of ws (a name from
// Workspace.name): it reads the ignore files above it, and drops them when
// they exclude it.
func (w *walker) start(ws Workspace, name string) {
	parts := splitName(name)
	w.patterns = readIgnore(ws.fs, ".git/info/exclude", nil, w.patterns)
	for i := 0; i < len(parts); i++ {
		w.patterns = readIgnore(ws.fs, joinName(parts[:i], ".gitignore"), parts[:i], w.patterns)
	}
	if len(parts) > 0 && w.ignored(parts, true) {
		w.patterns = nil
	}
}

// walk walks dir, the directory at path (from the workspace root, as
// shown; "" for the root itself) and parts (its name's elements, for the
// ignore rules).
func (w *walker) walk(dir *os.Root, path string, parts []string) error {
	return w.dir(dir, path, "", parts, 1)
}

func (w *walker) dir(dir *os.Root, path, rel string, parts []string, level int) error {
	saved := len(w.patterns)
	w.patterns = readIgnore(dir, ".gitignore", parts, w.patterns)
	defer func() { w.patterns = w.patterns[:saved] }()
	entries, err := readDir(dir)
	if err != nil {
		w.cannot(path, err)
	}
	for _, e := range entries {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		name := e.Name()
		if name == ".git" {
			continue
		}
		sub := append(parts[:len(parts):len(parts)], name)
		if w.ignored(sub, e.IsDir()) || e.IsDir() && slices.Contains(w.skip, strings.Join(sub, "/")) {
			continue
		}
		ent := walkEntry{dir: dir, name: name, rel: rel + name, path: path + encodeName(name), typ: e.Type()}
		if err := w.visit(ent); err != nil {
			return err
		}
		if !e.IsDir() || w.maxDepth > 0 && level >= w.maxDepth {
			continue
		}
		if err := w.subdir(dir, name, ent, sub, level); err != nil {
			return err
		}
	}
	return nil
}

// subdir walks the subdirectory name of dir.
func (w *walker) subdir(dir *os.Root, name string, ent walkEntry, parts []string, level int) error {
	sub, err := dir.OpenRoot(name)
	if err != nil {
		w.cannot(ent.path+"/", err)
		return nil
	}
	defer sub.Close()
	return w.dir(sub, ent.path+"/", ent.rel+"/", parts, level+1)
}

// ignored reports whether the ignore rules in force exclude the path
// with those elements: the last pattern that matches decides.
func (w *walker) ignored(parts []string, isDir bool) bool {
	for i := len(w.patterns) - 1; i >= 0; i-- {
		if m := w.patterns[i].Match(parts, isDir); m != gitignore.NoMatch {
			return m == gitignore.Exclude
		}
	}
	return false
}

// cannot notes an entry that could not be read.
func (w *walker) cannot(path string, err error) {
	if path == "" {
		path = "."
	}
	w.unreadable = append(w.unreadable, unreadableEntry(path, err))
}

// unreadableEntry names the entry at path that could not be read and why.
func unreadableEntry(path string, err error) string {
	return fmt.Sprintf("%s (%s)", path, strings.TrimPrefix(pathErr("", err), ": "))
}

// unreadableNote says which entries could not be read, the first few by
// name; "" when none.
func (w *walker) unreadableNote() string {
	const shown = 3
	n := len(w.unreadable)
	switch {
	case n == 0:
		return ""
	case n <= shown:
		return fmt.Sprintf("; could not read %s", strings.Join(w.unreadable, ", "))
	}
	return fmt.Sprintf("; could not read %d entries: %s, ...", n, strings.Join(w.unreadable[:shown], ", "))
}

// readIgnore appends the patterns of the ignore file name of r, with the
// directory it applies to (domain), to ps. A file that is missing, not
// regular or too large adds nothing.
func readIgnore(r *os.Root, name string, domain []string, ps []gitignore.Pattern) []gitignore.Pattern {
	f, err := r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return ps
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIgnoreFile {
		return ps
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxIgnoreFile))
	sc.Buffer(make([]byte, 0, 4096), maxIgnoreFile)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		if line == "" || strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		ps = append(ps, gitignore.ParsePattern(line, domain))
	}
	return ps
}

// splitName returns the elements of a name from Workspace.name, cleaned
// ("." has none).
func splitName(name string) []string {
	name = filepath.ToSlash(filepath.Clean(name))
	if name == "." {
		return nil
	}
	return strings.Split(name, "/")
}

// joinName is the name of elem in the directory with those elements.
func joinName(parts []string, elem string) string {
	if len(parts) == 0 {
		return elem
	}
	return strings.Join(parts, "/") + "/" + elem
}

// shownDir is how the tools show the directory name (from Workspace.name)
// as the prefix of the paths under it: "" for the root, else "dir/".
func shownDir(name string) string {
	if d := display(name); d != "." {
		return d + "/"
	}
	return ""
}
