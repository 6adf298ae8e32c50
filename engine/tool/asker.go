package tool

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/internal/textfmt"
)

// DefaultPromptInputBytes is how much of a call's input a TerminalAsker
// shows when MaxInputBytes is zero.
const DefaultPromptInputBytes = 4096

// TerminalAsker asks on a line-oriented terminal: it writes a prompt such as
//
//	allow fs_write {"path":"a.txt","content":"hi\n"}? [y/N]
//
// to Out and reads one line from In. The interlock's question (a Reason)
// is written on a line above; when the same question is the gate's too
// (both Reason and Permission, see Policy), a second line says so:
//
//	refused: lethal trifecta: the conversation holds private data (fs_read read the workspace) and untrusted content (web_fetch brought in content from outside); web_fetch could send it out: it reaches the network.
//	web_fetch reaches the network, which needs your permission too: one answer for both.
//	allow web_fetch {"url":"https://example.com/?d=..."}? [y/N]
//
// The gate's question alone (Permission only) is the allow line alone.
// "y" or "yes" (any case, surrounding blanks ignored) allows the call;
// anything else, including end of input, denies it. Whether a terminal exists is the caller's decision: without
// one, give the gate a nil Asker instead.
//
// The read is not interrupted by ctx: a cancelled context is noticed before
// the prompt is written and after the line is read (then the call is
// denied with ctx's error). Calls are serialised.
type TerminalAsker struct {
	// MaxInputBytes bounds how much of the call's input is shown; the rest is
	// replaced by a note saying how many bytes were left out. Zero means
	// DefaultPromptInputBytes; negative means no limit.
	MaxInputBytes int

	mu  sync.Mutex
	in  *bufio.Reader
	out io.Writer
}

// NewTerminalAsker returns an asker that prompts on out and reads answers
// from in.
func NewTerminalAsker(in io.Reader, out io.Writer) *TerminalAsker {
	return &TerminalAsker{in: bufio.NewReader(in), out: out}
}

// Confirm implements Asker.
func (a *TerminalAsker) Confirm(ctx context.Context, req Request) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return false, err
	}
	// The tool's name, its input and the reason come from a model or a
	// server: nothing in them may act on the terminal (textfmt.Visible).
	prompt := fmt.Sprintf("allow %s %s? [y/N] ", textfmt.VisibleLine(req.Tool), textfmt.Visible(a.showInput(req.Input)))
	if req.Reason != "" {
		if req.Permission != "" {
			prompt = textfmt.Visible(req.Permission) + ", which needs your permission too: one answer for both.\n" + prompt
		}
		prompt = textfmt.Visible(req.Reason) + "\n" + prompt
	}
	if _, err := io.WriteString(a.out, prompt); err != nil {
		return false, fmt.Errorf("tool: writing permission prompt: %w", err)
	}
	line, err := a.in.ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("tool: reading permission answer: %w", err)
	}
	if errors.Is(err, io.EOF) && line == "" {
		// End of input: nobody answers, so no. End the prompt's line.
		_, _ = io.WriteString(a.out, "\n")
		return false, nil
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	return false, nil
}

// showInput renders a call's input on one line: compact JSON, cut at
// MaxInputBytes on a UTF-8 boundary. Input that is not valid JSON is shown
// quoted; Confirm shows either through textfmt.Visible, as JSON strings
// may hold DEL, C1 controls and bidirectional overrides unescaped.
func (a *TerminalAsker) showInput(input json.RawMessage) string {
	var s string
	var buf bytes.Buffer
	if len(input) == 0 {
		s = "{}"
	} else if err := json.Compact(&buf, input); err == nil {
		s = buf.String() // valid JSON strings hold no raw control characters
	} else {
		s = fmt.Sprintf("%q", input)
	}
	limit := a.MaxInputBytes
	if limit == 0 {
		limit = DefaultPromptInputBytes
	}
	if limit < 0 || len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s... [%d more bytes not shown]", s[:cut], len(s)-cut)
}
