package tool

import (
	"context"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

// TestTrackerStartAfterTurn: the taint a run starts from counts for the
// calls of a turn already marked. A front end that marks the turn before
// it learns a resumed session's taint must not judge those calls clean,
// and the interlock must refuse a call that could leak.
func TestTrackerStartAfterTurn(t *testing.T) {
	t.Parallel()
	const why = "an earlier run of this session"
	both := transcript.Taint{Private: true, Untrusted: true}

	var tr Tracker
	tr.Turn()
	tr.Start(both, why)
	want := TaintState{Taint: both, PrivateBy: why, UntrustedBy: why}
	if got := tr.Judged(); got != want {
		t.Errorf("Judged() after Turn then Start = %+v, want %+v", got, want)
	}
	if got := tr.State(); got != want {
		t.Errorf("State() = %+v, want %+v", got, want)
	}

	fetch := &fakeTool{name: "web_fetch", caps: Capabilities{ReachesNetwork: true, External: true}}
	res, err := Interlock(Gate(tr.Wrap(fetch), ModeYes, nil), TrifectaRefuse, &tr, nil).Run(context.Background(), nil)
	if err != nil || !res.IsError || !strings.HasPrefix(res.Content, RefusalPrefix) || fetch.runs != 0 {
		t.Errorf("a call that could leak, judged after Start: %+v, %v, ran %d times", res, err, fetch.runs)
	}
	if !strings.Contains(res.Content, why) {
		t.Errorf("the refusal does not say where the taint came from: %q", res.Content)
	}
}

// TestTrackerStartKeepsTheTurnsReasons: in a turn already private by a
// call of its own, Start adds the untrusted half with its own reason and
// leaves the private reason as the turn had it.
func TestTrackerStartKeepsTheTurnsReasons(t *testing.T) {
	t.Parallel()
	var tr Tracker
	read := tr.Wrap(&fakeTool{name: "fs_read", caps: Capabilities{ReadsWorkspace: true}})
	if _, err := read.Run(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	tr.Turn()
	tr.Start(transcript.Taint{Untrusted: true}, "learned rules")
	want := TaintState{Taint: transcript.Taint{Private: true, Untrusted: true}, PrivateBy: "fs_read read the workspace", UntrustedBy: "learned rules"}
	if got := tr.Judged(); got != want {
		t.Errorf("Judged() = %+v, want %+v", got, want)
	}
	// Start with nothing changes nothing.
	tr.Start(transcript.Taint{}, "nothing")
	if got := tr.Judged(); got != want {
		t.Errorf("Judged() after an empty Start = %+v, want %+v", got, want)
	}
}
