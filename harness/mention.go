package harness

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/blobs"
	"github.com/mecha-agent/mecha/record/transcript"
)

// MaxAttachedFile bounds a text file attached to a prompt (an @file
// mention); MaxAttachedImage bounds an attached image.
const (
	MaxAttachedFile  = 256 << 10
	MaxAttachedImage = 5 << 20
)

// imageTypes are the media types of the images a prompt can attach, as
// their content shows them (the name's extension is not asked).
var imageTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// attachFiles reads the files a prompt mentions, inside the workspace as
// the file tools read (os.Root: no path, link or .. leads out of it,
// regular files only, bounded), and returns the prompt with each text
// file's content after it, and an image block (bytes loaded, SHA-256
// computed, not yet stored) for each PNG, JPEG, GIF or WebP image. Other
// binary files are refused. Reading them is reading the workspace: the
// history's taint becomes private, as an fs_read call's would (and
// untrusted too when the workspace is not trusted, as the file tools'
// reads are then), with the files named as the reason.
func attachFiles(workspace, text string, files []string, untrusted bool, h *agent.History) (string, []transcript.Block, error) {
	if len(files) == 0 {
		return text, nil, nil
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return "", nil, fmt.Errorf("attaching files: %w", err)
	}
	defer root.Close()
	var b strings.Builder
	var images []transcript.Block
	b.WriteString(text)
	for _, f := range files {
		name, err := inWorkspace(workspace, f)
		if err != nil {
			return "", nil, err
		}
		data, err := safeopen.ReadFileIn(root, name, MaxAttachedImage)
		if err != nil {
			return "", nil, fmt.Errorf("@%s: %w", textfmt.VisibleLine(f), err)
		}
		if mt := http.DetectContentType(data); imageTypes[mt] {
			images = append(images, transcript.ImageBlock(filepath.ToSlash(name), mt, blobs.Sum(data), data))
			continue
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return "", nil, fmt.Errorf("@%s is a binary file: only text files and PNG, JPEG, GIF or WebP images can be attached", textfmt.VisibleLine(f))
		}
		if len(data) > MaxAttachedFile {
			return "", nil, fmt.Errorf("@%s: %d bytes, more than the %d a text file attached may have", textfmt.VisibleLine(f), len(data), MaxAttachedFile)
		}
		fmt.Fprintf(&b, transcript.AttachedFileMark+"%q>\n%s", filepath.ToSlash(name), data)
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
	return b.String(), images, nil
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
