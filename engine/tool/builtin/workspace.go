package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mecha-agent/mecha/engine/tool"
)

// maxSymlinks bounds how many symbolic links following the last element of
// a path for a write may take, like the kernel's limit.
const maxSymlinks = 40

// Workspace is the directory the file tools are confined to. Every access
// goes through an os.Root opened on it once, by NewWorkspace: the kernel
// resolves each path relative to that open directory, one element at a
// time, and refuses any step out of it. There is no separate check to race
// with, so a directory swapped for a symbolic link to outside (by the
// unconfined shell, say) cannot redirect a call.
type Workspace struct {
	dir  string   // as given, cleaned
	root string   // dir with every symbolic link resolved
	fs   *os.Root // opened on root
	// protected are the directories inside the workspace no tool may
	// touch (mecha's home), as names from the root (see Protect).
	protected []string
}

// Protect returns w refusing every path in or under each of dirs that
// lies inside it (mecha's home when the workspace holds it): the file
// tools refuse such a path however it is written, through a symbolic
// link inside the workspace too, and the searches do not walk into it.
// A directory outside the workspace is left out: the workspace's bounds
// refuse it already.
func (w Workspace) Protect(dirs ...string) Workspace {
	out := w
	out.protected = nil
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if rel, ok := under(filepath.Clean(d), w.root); ok {
			out.protected = append(out.protected, filepath.ToSlash(rel))
		}
	}
	return out
}

// reasonProtected is the refusal of a path in a protected directory.
const reasonProtected = "is in mecha's own directory ($MECHA_HOME: its sessions, config and learned rules), which no tool may touch"

// guard refuses name (from name) when it is, or leads through a symbolic
// link into, a protected directory. The longest part of it that exists is
// resolved, so a link inside the workspace that points into mecha's home
// is followed here as the kernel would follow it.
func (w Workspace) guard(p, name string) error {
	if len(w.protected) == 0 {
		return nil
	}
	full := filepath.Join(w.root, name)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(full); err == nil {
			full = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(full)
		if parent == full {
			break
		}
		rest = filepath.Join(filepath.Base(full), rest)
		full = parent
	}
	rel, ok := under(full, w.root)
	if !ok {
		return nil // outside: the root refuses it
	}
	rel = filepath.ToSlash(rel)
	for _, d := range w.protected {
		if d == "." || rel == d || strings.HasPrefix(rel, d+"/") {
			return &PathError{Path: p, Reason: reasonProtected}
		}
	}
	return nil
}

// NewWorkspace returns the workspace rooted at dir, which must be an
// absolute path to an existing directory. dir may itself be (or pass
// through) a symbolic link: it is resolved once, here, and the directory
// it leads to is opened. Close releases it.
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
	r, err := os.OpenRoot(root)
	if err != nil {
		return Workspace{}, fmt.Errorf("builtin: workspace: %w", err)
	}
	return Workspace{dir: dir, root: root, fs: r}, nil
}

// Close releases the open workspace directory. The file tools built on w
// fail afterwards; the shell does not use it.
func (w Workspace) Close() error {
	if w.fs == nil {
		return nil
	}
	return w.fs.Close()
}

// Dir returns the workspace directory as given to NewWorkspace (cleaned).
func (w Workspace) Dir() string { return w.dir }

// Root returns the workspace directory with symbolic links resolved: the
// shell's working directory.
func (w Workspace) Root() string { return w.root }

// PathError is the refusal of a path the tools must not touch. Its message
// names the path as the model gave it.
type PathError struct {
	Path   string // as given
	Reason string
}

func (e *PathError) Error() string { return fmt.Sprintf("path %q %s", e.Path, e.Reason) }

// Refusal reasons.
const (
	reasonOutside = "is outside the workspace"
	reasonLink    = "is outside the workspace (a symbolic link on it leads out, or is absolute; links must be relative and stay inside)"
)

// name maps a path argument to a name relative to the workspace root, for
// w.fs. It does not look at the file system: an absolute path must start
// with the workspace directory, as given or resolved, and loses that
// prefix; a relative path is kept. The name must not climb out as written
// ("a/../../x"); otherwise ".." and symbolic links are resolved by the
// kernel, through the root. Trailing slashes are dropped. Errors are
// *PathError, except on a zero Workspace.
func (w Workspace) name(p string) (string, error) {
	if w.fs == nil {
		return "", errors.New("builtin: workspace not initialised (use NewWorkspace)")
	}
	if p == "" {
		return "", &PathError{Path: p, Reason: "is empty"}
	}
	if strings.IndexByte(p, 0) >= 0 {
		return "", &PathError{Path: p, Reason: "contains a NUL byte"}
	}
	// \xHH and \\ name bytes JSON cannot carry (see encodeName).
	name := decodeName(p)
	if filepath.IsAbs(name) {
		abs, ok := name, false
		if name, ok = under(abs, w.root); !ok {
			if name, ok = under(abs, w.dir); !ok {
				return "", &PathError{Path: p, Reason: reasonOutside}
			}
		}
	}
	if trimmed := strings.TrimRight(name, string(filepath.Separator)); trimmed != "" {
		name = trimmed
	}
	if !filepath.IsLocal(name) {
		// Climbing out as written is refused here, with a clearer message
		// than the root's (which would often be "no such file"), even in
		// the rare case where a link on the way would bring it back.
		return "", &PathError{Path: p, Reason: reasonOutside}
	}
	if err := w.guard(p, name); err != nil {
		return "", err
	}
	return name, nil
}

// under returns p relative to dir, without cleaning it, when p is dir or
// starts with dir and a separator.
func under(p, dir string) (string, bool) {
	sep := string(filepath.Separator)
	rest, ok := strings.CutPrefix(p, dir)
	switch {
	case !ok:
		return "", false
	case dir != sep && rest != "" && !strings.HasPrefix(rest, sep):
		return "", false // a sibling: /ws-old for /ws
	}
	if rest = strings.TrimLeft(rest, sep); rest == "" {
		return ".", true
	}
	return rest, true
}

// escapes reports whether err is os.Root's refusal of a path that leaves
// it, or target's of an absolute link. The standard library does not export
// its error; the text is pinned by TestEscapeIsRecognised.
func escapes(err error) bool {
	if errors.Is(err, errAbsLink) {
		return true
	}
	for ; err != nil; err = errors.Unwrap(err) {
		if err.Error() == "path escapes from parent" {
			return true
		}
	}
	return false
}

// refused returns the PathError for p when err is an escape from the root.
// Names that climb out as written never get that far (see name), so the
// escape is through a symbolic link.
func refused(p string, err error) *PathError {
	if !escapes(err) {
		return nil
	}
	return &PathError{Path: p, Reason: reasonLink}
}

// nameFailed turns a name error into a tool's return values: a path the
// model must not use is an error result, anything else a harness error.
func nameFailed(err error) (tool.Result, error) {
	var pe *PathError
	if errors.As(err, &pe) {
		return errorResult("%v", err), nil
	}
	return tool.Result{}, err
}

// failure renders an error from an access to the path p for the model: the
// refusal when the root refused it, else prefix and the OS error without
// the name given to the OS.
func failure(p, prefix string, err error) tool.Result {
	if pe := refused(p, err); pe != nil {
		return errorResult("%v", pe)
	}
	return errorResult("%s%s", prefix, pathErr(p, err))
}

// display returns name cleaned, with "/" separators, for a result, in
// the form a tool can be given back (encodeName).
func display(name string) string { return encodeName(filepath.ToSlash(filepath.Clean(name))) }

// openRegular opens name (the path p as given, mapped by Workspace.name)
// for reading when it is a regular file. When it is not one, the result is
// the error for the model; isDir is what to tell it about a directory. The
// file is opened without blocking (a FIFO would otherwise wait for a
// writer) and checked on the open descriptor, so what was checked is what
// is read.
func (w Workspace) openRegular(p, name, isDir string) (*os.File, *tool.Result) {
	fail := func(r tool.Result) (*os.File, *tool.Result) { return nil, &r }
	f, err := w.fs.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return fail(failure(p, "", err))
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
		f.Close()
		return fail(errorResult("%s", pathErr(p, err)))
	case fi.IsDir():
		f.Close()
		return fail(errorResult("%s is a directory%s", p, isDir))
	case !fi.Mode().IsRegular():
		f.Close()
		return fail(errorResult("%s is not a regular file", p))
	}
	return f, nil
}

// target follows symbolic links in the last element of name, through the
// root, and returns the name of the file they lead to (existing or not), so
// that a write replaces that file rather than the link. A link with an
// absolute target is refused like os.Root refuses one on the way.
func (w Workspace) target(name string) (string, error) {
	for range maxSymlinks {
		fi, err := w.fs.Lstat(name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return name, nil
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink == 0:
			return name, nil
		}
		link, err := w.fs.Readlink(name)
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(link) {
			return "", &fs.PathError{Op: "readlink", Path: name, Err: errAbsLink}
		}
		// Not filepath.Join: it would clean "link/.." lexically, and the
		// kernel would not.
		if dir := parent(name); dir != "." {
			link = dir + string(filepath.Separator) + link
		}
		name = link
	}
	return "", &fs.PathError{Op: "readlink", Path: name, Err: syscall.ELOOP}
}

// errAbsLink is target's refusal of a link os.Root would refuse on the way.
var errAbsLink = errors.New("symbolic link is absolute")

// parent returns name without its last element, without cleaning it; "."
// when name has one element.
func parent(name string) string {
	i := strings.LastIndexByte(name, filepath.Separator)
	if i <= 0 {
		return "."
	}
	return name[:i]
}
