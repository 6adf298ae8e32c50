package runcmd

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/internal/safeopen"
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

// write writes text to path, making its directory.
func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestProjectInstructions(t *testing.T) {
	t.Parallel()
	t.Run("none", func(t *testing.T) {
		name, text, err := projectInstructions(t.TempDir())
		if name != "" || text != "" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("AGENTS.md before CLAUDE.md", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "AGENTS.md"), "\nagents\n")
		write(t, filepath.Join(ws, "CLAUDE.md"), "claude")
		if name, text, err := projectInstructions(ws); name != "AGENTS.md" || text != "agents" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("CLAUDE.md when there is no AGENTS.md", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "CLAUDE.md"), "claude")
		if name, text, err := projectInstructions(ws); name != "CLAUDE.md" || text != "claude" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("a link inside the workspace is followed", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "docs", "agents.md"), "inside")
		if err := os.Symlink("docs/agents.md", filepath.Join(ws, "AGENTS.md")); err != nil {
			t.Fatal(err)
		}
		if name, text, err := projectInstructions(ws); name != "AGENTS.md" || text != "inside" || err != nil {
			t.Errorf("%q %q %v", name, text, err)
		}
	})
	t.Run("over 256 KiB", func(t *testing.T) {
		ws := t.TempDir()
		write(t, filepath.Join(ws, "AGENTS.md"), strings.Repeat("x", maxInstructions+1))
		if _, _, err := projectInstructions(ws); !errors.Is(err, safeopen.ErrTooLarge) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("not a regular file", func(t *testing.T) {
		ws := t.TempDir()
		if err := os.Mkdir(filepath.Join(ws, "AGENTS.md"), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, _, err := projectInstructions(ws); !errors.Is(err, safeopen.ErrNotRegular) {
			t.Errorf("err %v", err)
		}
	})
	t.Run("a FIFO is refused without waiting for a writer", func(t *testing.T) {
		ws := t.TempDir()
		if err := syscall.Mkfifo(filepath.Join(ws, "AGENTS.md"), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, _, err := projectInstructions(ws); !errors.Is(err, safeopen.ErrNotRegular) {
			t.Errorf("err %v", err)
		}
	})
}

// TestProjectInstructionsLinkOut: a link from AGENTS.md or CLAUDE.md out of
// the workspace is refused, where the same link opened unconfined reaches
// the secret.
func TestProjectInstructionsLinkOut(t *testing.T) {
	t.Parallel()
	for _, target := range []string{"abs", "../secret", "sub/../../secret"} {
		t.Run("a link out of the workspace is refused: "+target, func(t *testing.T) {
			top := t.TempDir()
			secret := filepath.Join(top, "secret")
			write(t, secret, "PRIVATE KEY")
			ws := filepath.Join(top, "ws")
			if target == "abs" {
				target = secret
			}
			write(t, filepath.Join(ws, "sub", "README"), "")
			if err := os.Symlink(target, filepath.Join(ws, "CLAUDE.md")); err != nil {
				t.Fatal(err)
			}
			name, text, err := projectInstructions(ws)
			if err == nil || strings.Contains(text, "PRIVATE") || !strings.Contains(err.Error(), "--no-project-instructions") {
				t.Errorf("%q %q %v", name, text, err)
			}
			// The control: opened by its path, unconfined, the link does
			// lead to the secret.
			if b, err := safeopen.ReadFile(filepath.Join(ws, "CLAUDE.md"), maxInstructions); err != nil || string(b) != "PRIVATE KEY" {
				t.Errorf("the link does not reach the secret: %q %v", b, err)
			}
		})
	}
}
