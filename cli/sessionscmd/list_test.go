package sessionscmd

import (
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestParseSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	paris := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"7d", now.AddDate(0, 0, -7)},
		{"36h", now.Add(-36 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
		{"2w", now.AddDate(0, 0, -14)},
		{"1w2d", now.AddDate(0, 0, -9)},
		{"1d12h", now.Add(-36 * time.Hour)},
		{"0d", now},
		{"2026-11-01", time.Date(2026, 11, 1, 0, 0, 0, 0, paris)},
		{"2026-11-01T15:04", time.Date(2026, 11, 1, 15, 4, 0, 0, paris)},
		{"2026-11-01 15:04", time.Date(2026, 11, 1, 15, 4, 0, 0, paris)},
		{"2026-11-01T15:04:05Z", time.Date(2026, 11, 1, 15, 4, 5, 0, time.UTC)},
	} {
		got, err := parseSince(tc.in, now, paris)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "7", "1.5d", "-3d", "-1h", "d", "3d2w", "2026-13-01", "1h2d"} {
		if got, err := parseSince(bad, now, paris); err == nil {
			t.Errorf("parseSince(%q) = %v, want an error", bad, got)
		}
	}
}

func TestListFlags(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	env := &cmdkit.Env{Clock: func() time.Time { return now }}
	var got *ListOptions
	err := cmdtest.Execute(NewCmdList(env, func(o *ListOptions) error { got = o; return nil }),
		"-w", ".", "--kind", "run,serve", "--kind", "proxy", "--since", "7d", "--no-children", "--no-replays")
	if err != nil {
		t.Fatal(err)
	}
	if got.Workspace != "." || len(got.Kinds) != 3 || got.Kinds[2] != "proxy" || !got.SinceTime.Equal(now.AddDate(0, 0, -7)) || !got.NoChildren || !got.NoReplays {
		t.Errorf("options %+v", got)
	}
}
