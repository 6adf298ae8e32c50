package tool

import (
	"context"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestAbsorbRefinesOnlyItsOwnHalf: Absorb replaces a reason only when the
// absorbed taint has that half and the tool that gave the reason, counted
// at entry, is the one named; a reason another tool gave first, or the
// half the absorbed taint does not touch, stays.
func TestAbsorbRefinesOnlyItsOwnHalf(t *testing.T) {
	t.Parallel()
	read := &fakeTool{name: "fs_read", caps: Capabilities{ReadsWorkspace: true}}
	fetch := &fakeTool{name: "web_fetch", caps: Capabilities{ReachesNetwork: true, External: true}}
	agent := &fakeTool{name: "agent"}                   // a call handing its child nothing that taints
	reader := &fakeTool{name: "agent", caps: read.caps} // one handing it the workspace
	const (
		byRead    = "fs_read read the workspace"
		byFetch   = "web_fetch brought in content from outside"
		byAgent   = "agent read the workspace"
		childRead = "the child: fs_read read the workspace"
		childGot  = "the child: web_fetch brought in content from outside"
	)
	for _, tc := range []struct {
		name   string
		calls  []*fakeTool
		absorb transcript.Taint
		want   TaintState
	}{
		{"private first by another tool", []*fakeTool{read, agent}, transcript.Taint{Private: true},
			TaintState{Taint: transcript.Taint{Private: true}, PrivateBy: byRead}},
		{"untrusted first by another tool", []*fakeTool{fetch, agent}, transcript.Taint{Untrusted: true},
			TaintState{Taint: transcript.Taint{Untrusted: true}, UntrustedBy: byFetch}},
		{"the other half absorbed", []*fakeTool{read}, transcript.Taint{Untrusted: true},
			TaintState{Taint: transcript.Taint{Private: true, Untrusted: true}, PrivateBy: byRead, UntrustedBy: childGot}},
		{"the other half absorbed, the agent's own reason", []*fakeTool{reader}, transcript.Taint{Untrusted: true},
			TaintState{Taint: transcript.Taint{Private: true, Untrusted: true}, PrivateBy: byAgent, UntrustedBy: childGot}},
		{"the agent's own reason refined", []*fakeTool{reader}, transcript.Taint{Private: true},
			TaintState{Taint: transcript.Taint{Private: true}, PrivateBy: childRead}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var tr Tracker
			for _, c := range tc.calls {
				c := *c // a tool of its own: the subtests run in parallel
				if _, err := tr.Wrap(&c).Run(context.Background(), nil); err != nil {
					t.Fatal(err)
				}
			}
			tr.Absorb(tc.absorb, childRead, childGot, "agent")
			if got := tr.State(); got != tc.want {
				t.Errorf("State() = %+v, want %+v", got, tc.want)
			}
		})
	}
}
