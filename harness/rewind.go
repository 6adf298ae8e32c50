package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mecha-agent/mecha/internal/safeopen"
	"github.com/mecha-agent/mecha/internal/textfmt"
	"github.com/mecha-agent/mecha/record/blobs"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Blobs is the store of the file contents fs_write and fs_edit replaced
// ($MECHA_HOME/blobs).
func Blobs(w *World) (blobs.Store, error) {
	home, err := w.Home()
	if err != nil {
		return blobs.Store{}, err
	}
	return blobs.Store{Dir: filepath.Join(home, "blobs")}, nil
}

// Turn is one prompt of a session: what a rewind goes back to.
type Turn struct {
	N    int    // 1-based
	Text string // the prompt
	// Index is the prompt's position among the session's message records.
	Index int
}

// Turns are the prompts of s: its user messages that carry no tool
// result (a task, a chat prompt), in order.
func Turns(s *session.Session) []Turn {
	var out []Turn
	for i, m := range s.Messages() {
		if m.Role != transcript.RoleUser {
			continue
		}
		results := false
		for _, b := range m.Content {
			results = results || b.Type == transcript.BlockToolResult
		}
		if !results {
			out = append(out, Turn{N: len(out) + 1, Text: transcript.TextOf(m.Content), Index: i})
		}
	}
	return out
}

// Rewound is what a rewind did.
type Rewound struct {
	// Session is the new session, forked from the one rewound.
	Session session.Ref
	// Restored are the files put back (Removed: created since, so removed).
	Restored, Removed []string
	// NotUndone are the calls since the turn whose effects a rewind cannot
	// undo (a command, an MCP tool, a write recorded without its content
	// before), one line each.
	NotUndone []string
}

// ConflictError is a rewind refused because files changed since mecha's
// tools last wrote them: nothing was restored.
type ConflictError struct{ Files []string }

func (e *ConflictError) Error() string {
	return fmt.Sprintf("rewind refused, nothing restored: %s changed since mecha last wrote %s, outside mecha (%s); put back what mecha wrote or save your changes elsewhere, then rewind again",
		textfmt.Plural(len(e.Files), "a file", "files"), textfmt.Plural(len(e.Files), "it", "them"), strings.Join(e.Files, ", "))
}

// readOnlyTools are the tools whose calls change nothing a rewind must
// undo.
var readOnlyTools = map[string]bool{"fs_read": true, "fs_list": true, "fs_grep": true, "fs_glob": true, "web_fetch": true}

// Rewind goes back to before turn to of the session ref names: each file
// the file tools wrote since is put back to its content before the first
// of those writes (byte for byte, from the blob store) or removed if they
// created it, and the conversation before that turn is copied into a new
// session whose meta names where it was forked from. The session is held
// while it runs (one in use is refused). A file whose content is not what
// mecha last wrote to it (changed outside mecha) refuses the whole rewind
// before anything is touched (ConflictError); one mecha left as the record
// says it was at some point since the turn (a rewind of the same session
// to a later turn left it so) is not a change of anyone else's. workspace, when not "",
// replaces the recorded workspace (-w).
func Rewind(w *World, ref session.Ref, to int, workspace string) (*Rewound, error) {
	store, err := w.Store()
	if err != nil {
		return nil, err
	}
	lock, err := store.Acquire(ref)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	s, err := store.Load(ref)
	if err != nil {
		return nil, err
	}
	turns := Turns(s)
	if to < 1 || to > len(turns) {
		return nil, usagef("--to %d: session %s has %d %s (1 to %d)", to, ref.ID, len(turns), textfmt.Plural(len(turns), "turn", "turns"), len(turns))
	}
	cut := turns[to-1].Index
	if workspace == "" {
		workspace = s.Meta.Workspace
	}
	bs, err := Blobs(w)
	if err != nil {
		return nil, err
	}
	plan, notUndone := rewindPlan(s.Messages()[cut:])
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, fmt.Errorf("rewind: the workspace: %w", err)
	}
	defer root.Close()
	// Everything is checked before anything is written.
	var conflicts []string
	contents := map[string][]byte{}
	for _, f := range plan {
		now, err := currentSum(root, f.path)
		if err != nil {
			return nil, fmt.Errorf("rewind: %s: %w", f.path, err)
		}
		if !f.known[now] {
			conflicts = append(conflicts, textfmt.Visible(f.path))
			continue
		}
		if f.first != "" {
			data, err := bs.Get(f.first)
			if err != nil {
				return nil, fmt.Errorf("rewind: the content of %s before turn %d: %w", f.path, to, err)
			}
			contents[f.path] = data
		}
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Files: conflicts}
	}
	out := &Rewound{NotUndone: notUndone}
	for _, f := range plan {
		if f.first == "" {
			if err := root.Remove(f.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return out, fmt.Errorf("rewind: removing %s: %w", f.path, err)
			}
			out.Removed = append(out.Removed, f.path)
			continue
		}
		if err := restore(root, f.path, contents[f.path]); err != nil {
			return out, fmt.Errorf("rewind: restoring %s: %w", f.path, err)
		}
		out.Restored = append(out.Restored, f.path)
	}
	out.Session, err = fork(store, s, ref, to, cut)
	return out, err
}

// fileRewind is one file to put back: its content before the first
// write since the turn ("" when that write created it).
type fileRewind struct {
	path, first string
	// known are the contents the file had since the turn by the record:
	// before and after each write (a rewind puts back one of them, so a
	// later rewind of the same session finds it so).
	known map[string]bool
}

// rewindPlan reads the messages since the turn: the files to put back, in
// the order first written, and the calls a rewind cannot undo.
func rewindPlan(msgs []*transcript.Message) ([]*fileRewind, []string) {
	calls := map[string]transcript.Block{}
	var order []string
	files := map[string]*fileRewind{}
	var notUndone []string
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.Type {
			case transcript.BlockToolUse:
				calls[b.ID] = b
			case transcript.BlockToolResult:
				c := calls[b.ToolUseID]
				for _, fc := range b.FileChanges {
					f := files[fc.Path]
					if f == nil {
						f = &fileRewind{path: fc.Path, first: fc.Before, known: map[string]bool{}}
						files[fc.Path] = f
						order = append(order, fc.Path)
					}
					f.known[fc.Before], f.known[fc.After] = true, true
				}
				if len(b.FileChanges) > 0 || readOnlyTools[c.Name] || (b.IsError && !b.OutcomeUnknown && (c.Name == "fs_write" || c.Name == "fs_edit")) {
					continue
				}
				notUndone = append(notUndone, describeUndone(c))
			}
		}
	}
	out := make([]*fileRewind, len(order))
	for i, p := range order {
		out[i] = files[p]
	}
	return out, notUndone
}

// describeUndone names a call a rewind cannot undo.
func describeUndone(c transcript.Block) string {
	var in map[string]any
	_ = json.Unmarshal(c.Input, &in)
	switch c.Name {
	case "shell":
		cmd, _ := in["command"].(string)
		return "shell: " + textfmt.Visible(textfmt.Clip(textfmt.OneLine(cmd), 200))
	case "fs_write", "fs_edit":
		p, _ := in["path"].(string)
		return c.Name + ": " + textfmt.Visible(p) + " (recorded without its content before)"
	case "":
		return "a call whose request is not in the transcript"
	}
	return textfmt.Visible(c.Name) + ": " + textfmt.Visible(textfmt.Clip(textfmt.JSON(c.Input, 200), 200))
}

// currentSum is the SHA-256 of the file now ("" when there is none).
func currentSum(root *os.Root, name string) (string, error) {
	data, err := safeopen.ReadFileIn(root, name, blobs.MaxBlob)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return blobs.Sum(data), nil
}

// restore replaces name, inside root, with data: a temporary file
// renamed over it, keeping its mode.
func restore(root *os.Root, name string, data []byte) error {
	mode := fs.FileMode(0o644)
	if st, err := root.Stat(name); err == nil {
		mode = st.Mode().Perm()
	}
	if err := root.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(name), "."+filepath.Base(name)+".rewind-tmp")
	f, err := root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Chmod(mode)
	}
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = root.Rename(tmp, name)
	}
	if werr != nil {
		_ = root.Remove(tmp)
	}
	return werr
}

// fork writes the new session: the records of s before the message at
// cut, under a meta naming s and the turn.
func fork(store *session.Store, s *session.Session, ref session.Ref, to, cut int) (session.Ref, error) {
	meta := transcript.Meta{Provider: s.Meta.Provider, Model: s.Meta.Model, Workspace: s.Meta.Workspace,
		Title: textfmt.Clip(s.Meta.Title, 200), ForkOf: &transcript.Fork{Session: ref.ID, Turn: to}}
	var recs []transcript.Record
	n := 0
	for _, r := range s.Records {
		if _, ok := r.(*transcript.Message); ok {
			if n == cut {
				break
			}
			n++
		}
		recs = append(recs, r)
	}
	// A run cut short has no summary: the records before the cut end
	// where they end, as an interrupted run's would have. Taint
	// checkpoints before the cut cover what they covered.
	wr, err := store.Create(meta)
	if err != nil {
		return session.Ref{}, err
	}
	if len(recs) > 0 {
		if err := wr.Append(recs...); err != nil {
			wr.Close()
			return session.Ref{}, err
		}
	}
	return wr.Ref(), wr.Close()
}
