package tool

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mecha-agent/mecha/transcript"
)

// TaintOf returns the taint state of a conversation in which tools with the
// given capabilities actually ran: private once any of them read the
// workspace, untrusted once any of them may have brought in outside content.
// Pass the capabilities of calls that ran, not of tools that were merely
// offered or calls that were denied.
func TaintOf(caps ...Capabilities) transcript.Taint {
	var t transcript.Taint
	for _, c := range caps {
		t.Private = t.Private || c.ReadsWorkspace
		t.Untrusted = t.Untrusted || c.External
	}
	return t
}

// Tracker accumulates the taint of the calls that actually ran. Wrap each
// tool inside the permission gate, so that denied calls are not counted:
//
//	tl = Gate(tracker.Wrap(tl), mode, asker)
//
// A call counts once Run was entered, whatever its result: a failing
// command may still have printed private or outside data. A Tracker is safe
// for concurrent use; its zero value is clean.
type Tracker struct {
	mu    sync.Mutex
	taint transcript.Taint
}

// Wrap returns t, recording its capabilities each time it runs.
func (tr *Tracker) Wrap(t Tool) Tool { return &tracked{Tool: t, tr: tr} }

// Taint returns the taint of the calls that ran so far.
func (tr *Tracker) Taint() transcript.Taint {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.taint
}

func (tr *Tracker) add(c Capabilities) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.taint = tr.taint.Merge(TaintOf(c))
}

type tracked struct {
	Tool
	tr *Tracker
}

// Unwrap returns the tool the tracker wraps.
func (t *tracked) Unwrap() Tool { return t.Tool }

func (t *tracked) Run(ctx context.Context, input json.RawMessage) (Result, error) {
	t.tr.add(t.Capabilities())
	return t.Tool.Run(ctx, input)
}
