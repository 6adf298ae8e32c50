package learncmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestLearnFlags(t *testing.T) {
	t.Parallel()
	var got *LearnOptions
	cmd := NewCmdLearn(&cmdkit.Env{}, func(_ context.Context, o *LearnOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "--days", "7", "-p", "local", "-m", "q", "--yes"); err != nil {
		t.Fatal(err)
	}
	if got.Days != 7 || got.Provider != "local" || got.Model != "q" || !got.Yes {
		t.Errorf("parsed %+v", got)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--list", "--yes"}, "--list goes with no other flag"},
		{[]string{"--list", "--days", "3"}, "--list goes with no other flag"},
		{[]string{"--forget", "0"}, "rule number of 1 or more"},
		{[]string{"--forget", "2", "--yes"}, "only with --dry-run"},
		{[]string{"--forget", "2", "-p", "local"}, "only with --dry-run"},
		{[]string{"--dry-run", "--yes"}, "contradict"},
		{[]string{"--days", "0"}, "--days must be at least 1"},
		{[]string{"--mock-script", "s.json"}, "--mock-script goes with -p mock"},
		{[]string{"extra"}, ""},
	} {
		cmd := NewCmdLearn(&cmdkit.Env{}, func(context.Context, *LearnOptions) error { t.Error("ran despite bad usage"); return nil })
		err := cmdtest.Execute(cmd, tc.args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
	// --forget with --dry-run is fine.
	cmd = NewCmdLearn(&cmdkit.Env{}, func(context.Context, *LearnOptions) error { return nil })
	if err := cmdtest.Execute(cmd, "--forget", "1", "--dry-run"); err != nil {
		t.Error(err)
	}
}

func TestDistillFlags(t *testing.T) {
	t.Parallel()
	var got *DistillOptions
	cmd := NewCmdDistill(&cmdkit.Env{}, func(_ context.Context, o *DistillOptions) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "--json"); err != nil {
		t.Fatal(err)
	}
	if got.Days != defaultDays || !got.JSON {
		t.Errorf("parsed %+v", got)
	}
	cmd = NewCmdDistill(&cmdkit.Env{}, func(context.Context, *DistillOptions) error { t.Error("ran"); return nil })
	var ue *cmdkit.UsageError
	if err := cmdtest.Execute(cmd, "--days", "-1"); !errors.As(err, &ue) {
		t.Errorf("--days -1: %v", err)
	}
}

// TestConfirm checks when learn writes: --yes, a terminal's yes; and when
// it does not: a terminal's no, no terminal, --dry-run.
func TestConfirm(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		yes, dry    bool
		tty         bool
		in          string
		ask, writes bool
		says        string
	}{
		{"yes", true, false, false, "", true, true, "wrote "},
		{"terminal y", false, false, true, "y\n", true, true, "[y/N]"},
		{"terminal no", false, false, true, "n\n", true, false, "nothing written"},
		{"terminal eof", false, false, true, "", true, false, "nothing written"},
		{"no terminal", false, false, false, "", true, false, "no terminal to confirm on"},
		{"dry run", false, true, true, "y\n", true, false, "dry run"},
		{"forget", false, false, false, "", false, true, "wrote "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &cmdkit.Env{In: strings.NewReader(tc.in), InTTY: tc.tty, Out: &out, Err: &errb}
			path := filepath.Join(t.TempDir(), "home", RulesFile)
			err := confirmAndWrite(&LearnOptions{Env: env, Yes: tc.yes, DryRun: tc.dry}, path, "", "- r\n", tc.ask)
			if err != nil {
				t.Fatal(err)
			}
			_, statErr := os.Stat(path)
			if (statErr == nil) != tc.writes {
				t.Errorf("written: %v, want %v", statErr == nil, tc.writes)
			}
			if !strings.Contains(out.String(), "+- r") || !strings.Contains(errb.String(), tc.says) {
				t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
			}
		})
	}
}
