package chatcmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/internal/workdir"
)

// An @file mention names a file of the workspace in a prompt: "explain
// @cmd/main.go". The file's content is sent after the prompt (the harness
// reads it inside the workspace, as fs_read would, and the conversation is
// private from then on). Tab completes the mention being typed at the end
// of the input box.

// mentionRE finds the mentions of a text: @ at the start or after a blank.
var mentionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|\s)@([^\s@]+)`) })

// maxMentions bounds the files one prompt may attach.
const maxMentions = 20

// workspaceRoot opens the chat's workspace (the caller closes it).
func (e *engine) workspaceRoot() (*os.Root, string, error) {
	ws, err := workdir.Dir(e.settings().Workspace)
	if s := e.door.Resumed(); s != nil && !e.isGiven("workspace") {
		ws, err = workdir.Dir(s.Meta.Workspace)
	}
	if err != nil {
		return nil, "", err
	}
	root, err := os.OpenRoot(ws)
	return root, ws, err
}

// mentions are the files text mentions that exist in the workspace, each
// once; an @word that names no file there is text (an address, a handle).
// A mention that names a file outside the workspace, a directory or
// something that cannot be read is an error, for the person to fix.
func (e *engine) mentions(text string) ([]string, error) {
	found := mentionRE().FindAllStringSubmatch(text, -1)
	if len(found) == 0 {
		return nil, nil
	}
	root, ws, err := e.workspaceRoot()
	if err != nil {
		return nil, err
	}
	defer root.Close()
	var files []string
	for _, f := range found {
		name := f[1]
		st, err := root.Stat(strings.TrimPrefix(name, ws+"/"))
		if errors.Is(err, fs.ErrNotExist) {
			// "@a.txt," : the punctuation after a mention is not its.
			trimmed := strings.TrimRight(name, ",.;:!?)'\"")
			if trimmed == name {
				continue
			}
			if st, err = root.Stat(trimmed); err != nil {
				continue
			}
			name = trimmed
		}
		switch {
		case err != nil && strings.Contains(err.Error(), "escapes"):
			return nil, fmt.Errorf("@%s leads outside the workspace: only its files can be attached", textfmt.VisibleLine(name))
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("@%s: %v", textfmt.VisibleLine(name), err)
		case st.IsDir():
			return nil, fmt.Errorf("@%s is a directory: mention files", textfmt.VisibleLine(name))
		}
		if !slices.Contains(files, name) {
			files = append(files, name)
		}
	}
	if len(files) > maxMentions {
		return nil, fmt.Errorf("%d files mentioned: at most %d go with one prompt", len(files), maxMentions)
	}
	return files, nil
}

// completeMention completes the @mention at the end of the input box
// against the workspace's files: one match is put in whole (a directory
// with its "/", to go on), several are completed as far as they agree
// and listed. It reports whether there was a mention to complete.
func (m *model) completeMention() bool {
	val := m.ta.Value()
	i := strings.LastIndexAny(val, " \t\n")
	word := val[i+1:]
	if !strings.HasPrefix(word, "@") {
		return false
	}
	typed := word[1:]
	dir, prefix := path.Split(typed)
	root, _, err := m.eng.workspaceRoot()
	if err != nil {
		m.note(err.Error())
		return true
	}
	defer root.Close()
	d := strings.TrimSuffix(dir, "/")
	if d == "" {
		d = "."
	}
	entries, err := fs.ReadDir(root.FS(), d)
	if err != nil {
		m.note(fmt.Sprintf("@%s: no such directory in the workspace", textfmt.VisibleLine(dir)))
		return true
	}
	var matches []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, prefix) || name == ".git" || (strings.HasPrefix(name, ".") && !strings.HasPrefix(prefix, ".")) {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		matches = append(matches, name)
	}
	switch len(matches) {
	case 0:
		m.note(fmt.Sprintf("no file of the workspace starts with %s", textfmt.VisibleLine(typed)))
		return true
	case 1:
		m.replaceTail(len(prefix), matches[0])
		return true
	}
	common := matches[0]
	for _, s := range matches[1:] {
		for !strings.HasPrefix(s, common) {
			common = common[:len(common)-1]
		}
	}
	m.replaceTail(len(prefix), common)
	shown := matches
	if len(shown) > 20 {
		shown = shown[:20]
	}
	list := textfmt.Visible(strings.Join(shown, "  "))
	if len(matches) > len(shown) {
		list += fmt.Sprintf("  (%d more)", len(matches)-len(shown))
	}
	m.note(list)
	return true
}

// replaceTail replaces the last n bytes of the input box with s.
func (m *model) replaceTail(n int, s string) {
	val := m.ta.Value()
	m.ta.SetValue(val[:len(val)-n] + s)
	m.ta.CursorEnd()
}
