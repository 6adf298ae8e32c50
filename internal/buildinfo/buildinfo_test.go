package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestVersionOf: a go install'ed module says its version, a checkout's
// build its commit, a binary with nothing stamped "dev".
func TestVersionOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.3.1"}}, "v0.3.1"},
		{&debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201090000-0123456789ab"}}, "v0.0.0-20261201090000-0123456789ab"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}}, "devel-0123456789ab+dirty"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "false"}}}, "devel-0123456789ab"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "dev"},
		{&debug.BuildInfo{}, "dev"},
	} {
		if got := versionOf(tc.info); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.info.Main, got, tc.want)
		}
	}
}
