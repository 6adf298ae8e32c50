package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mecha-agent/mecha/tool"
)

// maxSymlinks bounds how many symbolic links resolving one path may follow,
// like the kernel's limit.
const maxSymlinks = 40

// Workspace is the directory the tools are confined to. Every path a tool
// is given is relative to it, or absolute and inside it, and must stay
// inside it once symbolic links are followed.
type Workspace struct {
	dir  string // as given, cleaned
	root string // dir with every symbolic link resolved
}

// NewWorkspace returns the workspace rooted at dir, which must be an
// absolute path to an existing directory. dir may itself be (or pass
// through) a symbolic link: it is resolved once, here.
func NewWorkspace(dir string) (Workspace, error) {
	if !filepath.IsAbs(dir) {
		return Workspace{}, fmt.Errorf("builtin: workspace %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return Workspace{}, fmt.Errorf("builtin: workspace: %w", err)
	}
	fi, err := os.Stat(root)
	if err != nil {
		return Workspace{}, fmt.Errorf("builtin: workspace: %w", err)
	}
	if !fi.IsDir() {
		return Workspace{}, fmt.Errorf("builtin: workspace %q is not a directory", dir)
	}
	return Workspace{dir: dir, root: root}, nil
}

// Dir returns the workspace directory as given to NewWorkspace (cleaned).
func (w Workspace) Dir() string { return w.dir }

// Root returns the workspace directory with symbolic links resolved. Paths
// returned by Resolve are under it.
func (w Workspace) Root() string { return w.root }

// PathError is returned by Resolve for a path the tools must not touch.
// Its message names the path as the model gave it.
type PathError struct {
	Path   string // as given
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("path %q %s", e.Path, e.Reason) }

// Resolve maps a path argument to an absolute path inside the workspace
// with every symbolic link in it resolved, so that the caller operates on
// exactly the file that was checked. The path need not exist: symbolic
// links are followed as far as the path exists (a dangling link is
// followed to where it points), so creating a file under a link that leads
// outside is refused as well. Errors are *PathError, except on a zero
// Workspace.
//
// The check and the later use are not atomic: a process that swaps a
// directory for a symbolic link in between (only the unconfined shell tool
// could) can still redirect a call.
func (w Workspace) Resolve(p string) (string, error) {
	if w.root == "" {
		return "", errors.New("builtin: workspace not initialised (use NewWorkspace)")
	}
	if p == "" {
		return "", &PathError{Path: p, Reason: "is empty"}
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Reason: "contains a NUL byte"}
	}
	abs := p
	if !filepath.IsAbs(p) {
		// Not filepath.Join: it would clean "link/.." lexically, and the
		// kernel would not.
		abs = w.root + string(filepath.Separator) + p
	}
	resolved, err := resolvePath(abs)
	if err != nil {
		return "", &PathError{Path: p, Reason: "cannot be resolved: " + err.Error()}
	}
	if !w.contains(resolved) {
		if filepath.Clean(abs) == resolved {
			return "", &PathError{Path: p, Reason: "is outside the workspace"}
		}
		return "", &PathError{Path: p, Reason: fmt.Sprintf("is outside the workspace (it resolves to %s)", resolved)}
	}
	return resolved, nil
}

// resolveFailed turns a Resolve error into a tool's return values: a path
// the model must not use is an error result, anything else a harness error.
func resolveFailed(err error) (tool.Result, error) {
	var pe *PathError
	if errors.As(err, &pe) {
		return errorResult("%v", err), nil
	}
	return tool.Result{}, err
}

// Rel returns abs, a path returned by Resolve, relative to the workspace
// root, with "/" separators; the root itself is ".".
func (w Workspace) Rel(abs string) string {
	rel, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}

func (w Workspace) contains(p string) bool {
	if p == w.root {
		return true
	}
	prefix := w.root
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	return strings.HasPrefix(p, prefix)
}

// resolvePath resolves every symbolic link in the absolute path p the way
// the kernel would, component by component, and returns a clean absolute
// path. Unlike filepath.EvalSymlinks it does not require the path to exist:
// a missing component is taken literally (a following ".." removes it), and
// a dangling link is replaced by its target.
func resolvePath(p string) (string, error) {
	sep := string(filepath.Separator)
	pending := strings.Split(p, sep)
	cur := sep
	links := 0
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		// Every component is looked up, even below a missing one: a later
		// ".." can climb back to an existing directory and a link in it.
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			cur = next
			continue
		case err != nil:
			return "", err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		links++
		if links > maxSymlinks {
			return "", errors.New("too many levels of symbolic links")
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = sep
		}
		pending = append(strings.Split(target, sep), pending...)
	}
	return cur, nil
}

// regularFile resolves a path argument to a regular file in the workspace.
// When it is not one, bad is the error result for the model (or err a
// harness error). isDir is what to tell the model about a directory.
func (w Workspace) regularFile(rel, isDir string) (abs string, bad *tool.Result, err error) {
	fail := func(r tool.Result) (string, *tool.Result, error) { return "", &r, nil }
	abs, err = w.Resolve(rel)
	if err != nil {
		r, err := resolveFailed(err)
		if err != nil {
			return "", nil, err
		}
		return fail(r)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return fail(errorResult("%s", pathErr(rel, err)))
	case fi.IsDir():
		return fail(errorResult("%s is a directory%s", rel, isDir))
	case !fi.Mode().IsRegular():
		return fail(errorResult("%s is not a regular file", rel))
	}
	return abs, nil, nil
}
