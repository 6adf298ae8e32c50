package runcmd

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

// parseIn is parse with stdin: in (nil for none) and whether it is a
// terminal.
func parseIn(t *testing.T, in io.Reader, tty bool, args ...string) (*Options, error) {
	t.Helper()
	env := testEnv(t)
	env.In, env.InTTY = in, tty
	var got *Options
	cmd := NewCmdRun(env, func(_ context.Context, o *Options) error { got = o; return nil })
	err := cmdtest.Execute(cmd, args...)
	return got, err
}

func TestTaskSources(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "task.md")
	if err := os.WriteFile(file, []byte("# Fix the build\n\nIt fails on main.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	piped := func(s string) io.Reader { return strings.NewReader(s) }
	for _, tc := range []struct {
		name      string
		in        io.Reader
		tty       bool
		args      []string
		task      string // the whole task, or its prefix when context is appended
		withStdin string // the stdin appended, "" for none
	}{
		{"an argument, no stdin", nil, false, []string{"hello"}, "hello", ""},
		{"an argument, a terminal's stdin is not read", piped("typed"), true, []string{"hello"}, "hello", ""},
		{"an argument with stdin piped beside it", piped("line 1\nline 2\n"), false, []string{"review this"}, "review this", "line 1\nline 2\n"},
		{"UTF-8 beside an argument", piped("café € 日本\n"), false, []string{"translate"}, "translate", "café € 日本\n"},
		{"an argument with empty stdin", piped(""), false, []string{"hello"}, "hello", ""},
		{"an argument with blank stdin", piped(" \n\t\n"), false, []string{"hello"}, "hello", ""},
		{"- reads the task from stdin", piped("from stdin\n"), false, []string{"-"}, "from stdin\n", ""},
		{"-f - reads it from stdin", piped("from stdin\n"), false, []string{"-f", "-"}, "from stdin\n", ""},
		{"no argument: stdin is the task", piped("piped task"), false, nil, "piped task", ""},
		{"-f FILE", nil, false, []string{"-f", file}, "# Fix the build\n\nIt fails on main.\n", ""},
		{"-f FILE with stdin beside it", piped("log"), false, []string{"--file", file}, "# Fix the build\n\nIt fails on main.\n", "log\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseIn(t, tc.in, tc.tty, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.task
			if tc.withStdin != "" {
				want = tc.task + "\n\nThe standard input it was given:\n\n```stdin\n" + tc.withStdin + "```\n"
			}
			if o.Task != want {
				t.Errorf("task %q, want %q", o.Task, want)
			}
		})
	}
}

func TestTaskSourcesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	huge := strings.Repeat("x", maxTaskInput+1)
	binary := filepath.Join(dir, "image.png")
	if err := os.WriteFile(binary, []byte("\x89PNG\r\n\x1a\n\x00\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		in    io.Reader
		tty   bool
		args  []string
		usage bool
		want  string
	}{
		{"a terminal and no task", strings.NewReader(""), true, nil, true, "no task: give it as an argument"},
		{"empty stdin and no task", strings.NewReader(""), false, nil, true, "the task is empty"},
		{"blank stdin and no task", strings.NewReader("\n \n"), false, []string{"-"}, true, "the task is empty"},
		{"stdin over 1 MiB as the task", strings.NewReader(huge), false, nil, false, "stdin: file too large: more than 1048576 bytes"},
		{"stdin over 1 MiB beside a task", strings.NewReader(huge), false, []string{"x"}, false, "stdin: file too large"},
		{"binary stdin beside a task", strings.NewReader("PNG\x89\xff\x00"), false, []string{"describe"}, false, "stdin: not UTF-8 text"},
		{"NUL bytes on stdin", strings.NewReader("a\x00b"), false, nil, false, "stdin: not UTF-8 text"},
		{"a binary -f file", nil, false, []string{"-f", binary}, false, "-f " + binary + ": not UTF-8 text"},
		{"a missing -f file", nil, false, []string{"-f", filepath.Join(dir, "nope.md")}, false, "-f: open "},
		{"a directory as -f", nil, false, []string{"-f", dir}, false, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseIn(t, tc.in, tc.tty, tc.args...)
			var ue *cmdkit.UsageError
			if o != nil || err == nil || errors.As(err, &ue) != tc.usage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ran=%v err %v (usage error: %v), want %q (usage error: %v)", o != nil, err, errors.As(err, &ue), tc.want, tc.usage)
			}
		})
	}
}

// TestStdinFenceCannotBeClosedEarly: backticks in what was piped in make
// the fence longer, so the stdin block ends where mecha ended it.
func TestStdinFenceCannotBeClosedEarly(t *testing.T) {
	t.Parallel()
	got := withStdin("task", "a\n```\nnot the task\n`````\n")
	if !strings.Contains(got, "\n``````stdin\na\n```\nnot the task\n`````\n``````\n") {
		t.Errorf("fenced as %q", got)
	}
	// The control: without backticks, the usual three.
	if got := withStdin("task", "plain"); !strings.HasSuffix(got, "\n```stdin\nplain\n```\n") {
		t.Errorf("fenced as %q", got)
	}
}

// TestTitleIsTheTaskWithoutStdin: the default title comes from the task,
// not from the context appended to it.
func TestTitleIsTheTaskWithoutStdin(t *testing.T) {
	t.Parallel()
	o, err := parseIn(t, strings.NewReader("lots of log"), false, "explain the failure")
	if err != nil {
		t.Fatal(err)
	}
	if o.titleText != "explain the failure" || !strings.Contains(o.Task, "lots of log") {
		t.Errorf("title from %q, task %q", o.titleText, o.Task)
	}
}
