package replay

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// withPermission is recording() with mode as the permission mode of each
// attach's config record.
func withPermission(mode string) *session.Session {
	s := recording()
	for i, r := range s.Records {
		if c, ok := r.(*transcript.Config); ok {
			cp := *c
			cp.PermissionMode = mode
			s.Records[i] = &cp
		}
	}
	return s
}

// TestReplayPermissionModeOverride: Options.PermissionMode, when set,
// replaces the recorded mode in the config each attach's tools are built
// from and in the config the replay records; unset, the recorded mode
// stays.
func TestReplayPermissionModeOverride(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, recorded, override, want string
	}{
		{"override", "ask", "read-only", "read-only"},
		{"no override", "ask", "", "ask"},
		{"override of an unrecorded mode", "", "yes", "yes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fixture{runs: &atomic.Int64{}, prov: &script{answers: [][]transcript.Block{
				blocks(use("1", "fs_read", `{"path":"x"}`), use("2", "fs_write", `{"path":"out","content":"1"}`)),
				blocks(text("done")), blocks(use("3", "fs_read", `{"path":"y"}`)), blocks(text("done again")),
			}}}
			// The modes the tools were built for: first the recorded
			// configs' (to check that the tools still exist), then, last,
			// the config each attach runs with.
			var built []string
			tools := f.tools("fs_read", "fs_write")
			_, err := Replay(context.Background(), Options{
				Session: withPermission(tc.recorded), Providers: only(f.prov), Mode: ModeStop, Recorder: f,
				PermissionMode: tc.override,
				Tools: func(rc transcript.Config) (*tool.Registry, *tool.Tracker, error) {
					built = append(built, rc.PermissionMode)
					return tools(rc)
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{tc.want, tc.want}; len(built) < 2 || !reflect.DeepEqual(built[len(built)-2:], want) {
				t.Errorf("tools built for modes %q, want the last two %q", built, want)
			}
			var recorded []string
			for _, r := range f.recs {
				if c, ok := r.(*transcript.Config); ok {
					recorded = append(recorded, c.PermissionMode)
				}
			}
			if want := []string{tc.want, tc.want}; !reflect.DeepEqual(recorded, want) {
				t.Errorf("recorded modes %q, want %q", recorded, want)
			}
		})
	}
}
