package reruncmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestRerunFlags(t *testing.T) {
	t.Parallel()
	var got *Options
	cmd := NewCmdRerun(&cmdkit.Env{}, func(_ context.Context, o *Options) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "--diff", "--json", "--ignore", `\d+ms`, "--ignore", "/tmp/[^ ]+", "--read-only", "-w", "/w", "--no-session", "--trifecta", "off", "last"); err != nil {
		t.Fatal(err)
	}
	if got.ID != "last" || !got.Diff || !got.JSON || !got.ReadOnly || got.Workspace != "/w" || !got.NoSession || len(got.ignore) != 2 || got.Trifecta != "off" {
		t.Errorf("parsed %+v", got)
	}
}

func TestRerunFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "needs one session id"},
		{[]string{"--ignore", "(", "x"}, `--ignore "("`},
		{[]string{"--yes", "--read-only", "x"}, "contradict"},
		{[]string{"--trifecta", "maybe", "x"}, "--trifecta must be refuse, ask or off"},
		{[]string{"--sandbox", "chroot", "x"}, "--sandbox must be"},
	} {
		cmd := NewCmdRerun(&cmdkit.Env{}, func(context.Context, *Options) error { t.Error("ran despite bad usage"); return nil })
		err := cmdtest.Execute(cmd, tc.args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}
