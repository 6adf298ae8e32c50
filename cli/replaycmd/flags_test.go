package replaycmd

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/redrive/replay"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func parse(args ...string) (*ReplayOptions, error) {
	var got *ReplayOptions
	cmd := NewCmdReplay(&cmdkit.Env{}, func(_ context.Context, o *ReplayOptions) error { got = o; return nil })
	err := cmdtest.Execute(cmd, args...)
	return got, err
}

func TestReplayFlags(t *testing.T) {
	t.Parallel()
	o, err := parse("-p", "anthropic", "-m", "m", "--on-divergence", "live", "--repeat", "3", "--read-only", "-w", "/tmp",
		"--request-timeout", "2m", "2026")
	if err != nil {
		t.Fatal(err)
	}
	a := o.Attach
	if o.ID != "2026" || a.Provider != "anthropic" || a.Model != "m" || o.OnDivergence != string(replay.ModeLive) ||
		o.Repeat != 3 || !a.ReadOnly || a.Workspace != "/tmp" || a.RequestTimeout != 2*time.Minute {
		t.Errorf("parsed %+v", o)
	}
	// Unset, -p and -m replace nothing: each turn keeps its recorded ones.
	if o, err := parse("x"); err != nil || o.Attach.Provider != "" || o.Attach.Model != "" {
		t.Errorf("no -p: %+v, %v", o, err)
	}
}

func TestReplayFlagsRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--on-divergence", "panic", "x"}, "panic"},
		{[]string{"--repeat", "0", "x"}, "--repeat must be at least 1"},
		{[]string{"--yes", "--read-only", "x"}, "contradict"},
		{nil, "needs one session id"},
	} {
		o, err := parse(tc.args...)
		var ue *cmdkit.UsageError
		if o != nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("replay %q: ran=%v err %v, want a usage error containing %q", tc.args, o != nil, err, tc.want)
		}
	}
}
