package sessionscmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestSessionsFlags(t *testing.T) {
	t.Parallel()
	env := &cmdkit.Env{}
	var list *ListOptions
	if err := cmdtest.Execute(NewCmdList(env, func(o *ListOptions) error { list = o; return nil }), "--json", "-n", "5"); err != nil || !list.JSON || list.Limit != 5 {
		t.Errorf("list: %v %+v", err, list)
	}
	var show *ShowOptions
	if err := cmdtest.Execute(NewCmdShow(env, func(o *ShowOptions) error { show = o; return nil }), "--full", "2026"); err != nil || !show.Full || show.ID != "2026" {
		t.Errorf("show: %v %+v", err, show)
	}
	if err := cmdtest.Execute(NewCmdShow(env, func(o *ShowOptions) error { show = o; return nil }), "--last", "3", "--no-pager", "x"); err != nil || show.Last != 3 || !show.NoPager {
		t.Errorf("show: %v %+v", err, show)
	}
	if err := cmdtest.Execute(NewCmdShow(env, func(o *ShowOptions) error { show = o; return nil }), "--turn", "2", "x"); err != nil || show.Turn != 2 || show.NoPager {
		t.Errorf("show: %v %+v", err, show)
	}
	var stats *StatsOptions
	if err := cmdtest.Execute(NewCmdStats(env, func(o *StatsOptions) error { stats = o; return nil }), "--days", "30", "--json"); err != nil || stats.Days != 30 || !stats.JSON {
		t.Errorf("stats: %v %+v", err, stats)
	}
	var path *PathOptions
	if err := cmdtest.Execute(NewCmdPath(env, func(o *PathOptions) error { path = o; return nil }), "last"); err != nil || path.ID != "last" {
		t.Errorf("path: %v %+v", err, path)
	}
}

func TestSessionsFlagsRefused(t *testing.T) {
	t.Parallel()
	env := &cmdkit.Env{}
	for _, tc := range []struct {
		cmd  *cobra.Command
		args []string
		want string
	}{
		{NewCmdList(env, func(*ListOptions) error { t.Error("the command ran despite bad usage"); return nil }), []string{"-n", "-1"}, "--limit must not be negative"},
		{NewCmdList(env, func(*ListOptions) error { t.Error("the command ran despite bad usage"); return nil }), []string{"extra"}, "takes no arguments"},
		{NewCmdStats(env, func(*StatsOptions) error { t.Error("the command ran despite bad usage"); return nil }), []string{"--days", "-3"}, "--days must not be negative"},
		{NewCmdShow(env, func(*ShowOptions) error { t.Error("the command ran despite bad usage"); return nil }), nil, "needs one session id"},
		{NewCmdPath(env, func(*PathOptions) error { t.Error("the command ran despite bad usage"); return nil }), []string{"a", "b"}, "needs one session id"},
	} {
		err := cmdtest.Execute(tc.cmd, tc.args...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %q: %v, want a usage error containing %q", tc.cmd.Name(), tc.args, err, tc.want)
		}
	}
}

// TestBudgetFlag: --budget takes a size with an optional K or M suffix
// for view and for export's html; anything else, or --budget with another
// format, is a usage error before the command runs.
func TestBudgetFlag(t *testing.T) {
	t.Parallel()
	env := &cmdkit.Env{}
	for arg, want := range map[string]int{"8M": 8 << 20, "512K": 512 << 10, "1000": 1000, "2MiB": 2 << 20, "64kb": 64 << 10} {
		var v *ViewOptions
		if err := cmdtest.Execute(NewCmdView(env, func(o *ViewOptions) error { v = o; return nil }), "--budget", arg, "x"); err != nil || v.Budget != want {
			t.Errorf("view --budget %s: %v %+v", arg, err, v)
		}
	}
	var v *ViewOptions
	if err := cmdtest.Execute(NewCmdView(env, func(o *ViewOptions) error { v = o; return nil }), "x"); err != nil || v.Budget != 8<<20 {
		t.Errorf("view's default budget: %v %+v", err, v)
	}
	var e *ExportOptions
	if err := cmdtest.Execute(NewCmdExport(env, func(o *ExportOptions) error { e = o; return nil }), "-o", "p.html", "--budget", "1K", "x"); err != nil || e.Budget != 1<<10 {
		t.Errorf("export --budget: %v %+v", err, e)
	}
	for _, args := range [][]string{{"--budget", "0"}, {"--budget", "-1K"}, {"--budget", "8G"}, {"--budget", "lots"}} {
		err := cmdtest.Execute(NewCmdView(env, func(*ViewOptions) error { t.Error("ran"); return nil }), append(args, "x")...)
		var ue *cmdkit.UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--budget must be a positive size") {
			t.Errorf("view %q: %v", args, err)
		}
	}
	err := cmdtest.Execute(NewCmdExport(env, func(*ExportOptions) error { t.Error("ran"); return nil }), "--budget", "1K", "x")
	var ue *cmdkit.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--budget is for --format html") {
		t.Errorf("export md --budget: %v", err)
	}
}
