package chatcmd

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/mecha-agent/mecha/internal/atomicfile"
	"github.com/mecha-agent/mecha/internal/safeopen"
)

// history is the prompts sent in one workspace, oldest first, kept across
// chats in $MECHA_HOME/history/<hash of the workspace>.jsonl: one JSON
// string per line, at most historyMax of them (the oldest go first), the
// file replaced whole (atomicfile) each time a prompt is added, readable
// by its owner only. Up and Down walk it from the input box; Ctrl-R
// searches it.
//
// What is not kept on disk: a prompt that holds a paste (bracketed, or
// keys arriving as a burst no person types). A
// paste is where secrets arrive (a key, a token, a log with credentials
// in it); it stays in this chat's history, in memory, and is never
// written. Typed prompts are kept as typed.
type history struct {
	mu      sync.Mutex // over pending and the file
	pending []string   // prompts to write, in order
	path    string     // "" when the history is not kept on disk
	entries []string   // oldest first
	// At browsing: pos is the entry shown (len(entries) for the draft),
	// draft what the box held when browsing began.
	pos   int
	draft string
}

// historyMax bounds the entries kept; historyFileMax bounds the bytes
// read back (a larger file is read up to there).
const (
	historyMax     = 500
	historyFileMax = 4 << 20
)

// historyPath is the history file of workspace ws under home.
func historyPath(home, ws string) string {
	sum := sha256.Sum256([]byte(ws))
	return filepath.Join(home, "history", hex.EncodeToString(sum[:8])+".jsonl")
}

// loadHistory reads the history at path; a missing or unreadable file is
// an empty history (the chat goes on without one).
func loadHistory(path string) *history {
	h := &history{path: path}
	h.entries = readHistory(path)
	h.pos = len(h.entries)
	return h
}

func readHistory(path string) []string {
	if path == "" {
		return nil
	}
	b, err := safeopen.ReadFile(path, historyFileMax)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), historyFileMax)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			out = append(out, s)
		}
	}
	return trimHistory(out)
}

func trimHistory(e []string) []string {
	if len(e) > historyMax {
		e = e[len(e)-historyMax:]
	}
	return e
}

// add records a prompt sent; keep says whether it may be written to disk.
// It returns the write, to run off the screen's goroutine (nil when there
// is nothing to write): it writes every prompt added and not yet written,
// in order, after what other chats of the workspace added meanwhile. A
// write that fails loses the entries on disk, not in this chat.
func (h *history) add(text string, keep bool) func() error {
	if n := len(h.entries); n == 0 || h.entries[n-1] != text {
		h.entries = trimHistory(append(h.entries, text))
	}
	h.reset()
	if !keep || h.path == "" {
		return nil
	}
	h.mu.Lock()
	h.pending = append(h.pending, text)
	h.mu.Unlock()
	return h.flush
}

// flush writes the prompts pending.
func (h *history) flush() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.pending) == 0 {
		return nil
	}
	disk := readHistory(h.path)
	for _, text := range h.pending {
		if n := len(disk); n == 0 || disk[n-1] != text {
			disk = append(disk, text)
		}
	}
	h.pending = nil
	var buf bytes.Buffer
	for _, s := range trimHistory(disk) {
		line, _ := json.Marshal(s)
		buf.Write(append(line, '\n'))
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return err
	}
	return atomicfile.WriteFile(h.path, buf.Bytes(), 0o600)
}

// older is the entry before the one shown (cur is what the box holds);
// ok is false at the oldest.
func (h *history) older(cur string) (string, bool) {
	if h.pos == 0 {
		return "", false
	}
	if h.pos == len(h.entries) {
		h.draft = cur
	}
	h.pos--
	return h.entries[h.pos], true
}

// newer is the entry after the one shown, the draft after the newest.
func (h *history) newer() (string, bool) {
	if h.pos >= len(h.entries) {
		return "", false
	}
	h.pos++
	if h.pos == len(h.entries) {
		return h.draft, true
	}
	return h.entries[h.pos], true
}

// reset ends browsing: the next Up starts from the newest entry.
func (h *history) reset() { h.pos, h.draft = len(h.entries), "" }

// search is the newest entry before index from that holds query (case
// folded), and its index; -1 when none does.
func (h *history) search(query string, from int) (string, int) {
	q := strings.ToLower(query)
	for i := min(from, len(h.entries)) - 1; i >= 0; i-- {
		if strings.Contains(strings.ToLower(h.entries[i]), q) {
			return h.entries[i], i
		}
	}
	return "", -1
}
