package runcmd

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/safeopen"
)

// maxTaskInput bounds a task read from a file or stdin, and the stdin
// appended to a task as context.
const maxTaskInput = 1 << 20

// stdinArg is the task argument that means "read the task from stdin".
const stdinArg = "-"

// readTask resolves the task from the argument, -f and stdin: the argument
// ("-" for stdin), else the file, else stdin when it is not a terminal.
// Stdin that is not a terminal beside a task given otherwise is appended
// to it as context (see withStdin), never dropped.
func (o *Options) readTask(args []string) error {
	if len(args) == 1 && o.TaskFile != "" {
		return cmdkit.Usagef("give the task as an argument or with -f, not both")
	}
	fromStdin := (len(args) == 1 && args[0] == stdinArg) || o.TaskFile == stdinArg
	switch {
	case fromStdin:
		b, err := readBounded(o.Env.In, "stdin")
		if err != nil {
			return err
		}
		o.Task = string(b)
		return nil
	case len(args) == 1:
		o.Task = args[0]
	case o.TaskFile != "":
		b, err := safeopen.ReadFile(o.TaskFile, maxTaskInput)
		if err != nil {
			return fmt.Errorf("-f: %w", err)
		}
		if err := isText(b, "-f "+o.TaskFile); err != nil {
			return err
		}
		o.Task = string(b)
		o.titleText = o.Task
	case o.Env.In == nil || o.Env.InTTY:
		return cmdkit.Usagef(`no task: give it as an argument (mecha run "what changed?"), with -f FILE, or on stdin`)
	default:
		b, err := readBounded(o.Env.In, "stdin")
		if err != nil {
			return err
		}
		o.Task = string(b)
		return nil
	}
	return o.appendStdin()
}

// appendStdin reads stdin, when it is not a terminal, as context for a
// task given as an argument or a file.
func (o *Options) appendStdin() error {
	if o.Env.In == nil || o.Env.InTTY {
		return nil
	}
	b, err := readBounded(o.Env.In, "stdin")
	if err != nil {
		return err
	}
	o.titleText = o.Task
	o.Task = withStdin(o.Task, string(b))
	return nil
}

// readBounded reads r whole, refusing more than maxTaskInput bytes.
func readBounded(r io.Reader, what string) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, maxTaskInput+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if len(b) > maxTaskInput {
		return nil, fmt.Errorf("%s: %w: more than %d bytes (a task and its context are at most 1 MiB)", what, safeopen.ErrTooLarge, maxTaskInput)
	}
	return b, isText(b, what)
}

// isText refuses input that is not UTF-8 text: the transcript (JSON)
// would keep a replacement character for each byte that is not, and the
// model would be handed something other than what was piped in.
func isText(b []byte, what string) error {
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return fmt.Errorf("%s: not UTF-8 text (binary input cannot be a task or its context)", what)
	}
	return nil
}

// withStdin appends what was piped in to the task, fenced and labelled so
// that the model tells the two apart: the fence is longer than any run of
// backticks in the input, so nothing in it can close the block early.
// Stdin holding only white space adds nothing.
func withStdin(task, in string) string {
	if strings.TrimSpace(in) == "" {
		return task
	}
	fence := strings.Repeat("`", max(3, longestRun(in, '`')+1))
	if !strings.HasSuffix(in, "\n") {
		in += "\n"
	}
	return task + "\n\nThe standard input it was given:\n\n" + fence + "stdin\n" + in + fence + "\n"
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] != c {
			n = 0
			continue
		}
		n++
		best = max(best, n)
	}
	return best
}
