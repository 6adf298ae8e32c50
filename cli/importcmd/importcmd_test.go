package importcmd

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestImportFlags(t *testing.T) {
	t.Parallel()
	var got *Options
	cmd := NewCmdImport(&cmdkit.Env{}, func(_ context.Context, o *Options) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "codex", "a.jsonl", "b.jsonl", "--dry-run", "--json"); err != nil {
		t.Fatal(err)
	}
	if got.Harness != "codex" || len(got.Paths) != 2 || !got.DryRun || !got.JSON || got.All {
		t.Errorf("parsed %+v", got)
	}
}

func TestImportFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "name the harness"},
		{[]string{"aider", "x"}, `unknown harness "aider"`},
		{[]string{"codex"}, "or give --all"},
		{[]string{"codex", "x", "--all"}, "not both"},
	} {
		cmd := NewCmdImport(&cmdkit.Env{}, func(context.Context, *Options) error { t.Error("ran despite bad usage"); return nil })
		err := cmdtest.Execute(cmd, tc.args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}

func TestSources(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	for _, p := range []string{
		".claude/projects/-w/a.jsonl", ".claude/projects/-w/notes.txt", ".claude/b.jsonl", ".claude/projects/-w/agent-4d4d.jsonl",
		".claude/projects/-w/a/subagents/agent-a3f0.jsonl",
		".codex/sessions/2025/09/01/rollout-x.jsonl", ".codex/sessions/2025/09/01/other.jsonl",
	} {
		p = filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for harness, want := range map[string]string{"claude-code": ".claude/projects/-w/a.jsonl", "codex": ".codex/sessions/2025/09/01/rollout-x.jsonl"} {
		got, err := Sources(harness, home)
		if err != nil || len(got) != 1 || got[0] != filepath.Join(home, want) {
			t.Errorf("%s: %v %v, want [%s]", harness, got, err, want)
		}
	}
}
