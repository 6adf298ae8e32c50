package scriptcmd

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestScriptFlags(t *testing.T) {
	t.Parallel()
	var got *Options
	cmd := NewCmdScript(&cmdkit.Env{}, func(_ context.Context, o *Options) error { got = o; return nil })
	if err := cmdtest.Execute(cmd, "-o", "x.sh", "--json", "last"); err != nil {
		t.Fatal(err)
	}
	if got.ID != "last" || got.Output != "x.sh" || !got.JSON {
		t.Errorf("parsed %+v", got)
	}
}

func TestScriptFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "needs one session id"},
		{[]string{"a", "b"}, "needs one session id"},
		{[]string{"-o", "-", "--json", "a"}, "cannot go with --json"},
	} {
		cmd := NewCmdScript(&cmdkit.Env{}, func(context.Context, *Options) error { t.Error("ran despite bad usage"); return nil })
		err := cmdtest.Execute(cmd, tc.args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}
