package harness

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// MaxAttachedFile bounds a file attached to a prompt (an @file mention).
const MaxAttachedFile = 256 << 10

// attachFiles reads the files a prompt mentions, inside the workspace as
// the file tools read (os.Root: no path, link or .. leads out of it,
// regular files only, bounded, text only), and returns the prompt with
// each file's content after it. Reading them is reading the workspace: the
// history's taint becomes private, as an fs_read call's would (and
// untrusted too when the workspace is not trusted, as the file tools'
// reads are then), with the files named as the reason.
func attachFiles(workspace, text string, files []string, untrusted bool, h *agent.History) (string, error) {
	if len(files) == 0 {
		return text, nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", fmt.Errorf("attaching files: %w", err)
	}
	defer root.Close()
	var b strings.Builder
	b.WriteString(text)
	for _, f := range files {
		name, err := inWorkspace(workspace, f)
		if err != nil {
			return "", err
		}
		data, err := safeopen.ReadFileIn(root, name, MaxAttachedFile)
		if err != nil {
			return "", fmt.Errorf("@%s: %w", textfmt.VisibleLine(f), err)
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return "", fmt.Errorf("@%s is a binary file: only text files can be attached", textfmt.VisibleLine(f))
		}
		fmt.Fprintf(&b, "\n\n<file path=%q>\n%s", filepath.ToSlash(name), data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
		b.WriteString("</file>")
	}
	if !h.Taint.Private || (untrusted && !h.Taint.Untrusted) {
		h.Taint.Private = true
		why := "the prompt attached " + strings.Join(files, ", ")
		if untrusted {
			h.Taint.Untrusted = true
			why += " from a workspace that is not trusted (mecha trust trusts it)"
		}
		if h.TaintWhy != "" && !h.Taint.Clean() {
			why = h.TaintWhy + "; " + why
		}
		h.TaintWhy = why
	}
	return b.String(), nil
}

// inWorkspace is f (relative to the workspace, or absolute inside it) as
// a name relative to the workspace.
func inWorkspace(workspace, f string) (string, error) {
	name := f
	if filepath.IsAbs(name) {
		rel, err := filepath.Rel(workspace, name)
		if err != nil || rel == ".." || strings.HasPrefix(rel, "../") {
			return "", fmt.Errorf("@%s is outside the workspace", textfmt.VisibleLine(f))
		}
		name = rel
	}
	return filepath.Clean(name), nil
}
