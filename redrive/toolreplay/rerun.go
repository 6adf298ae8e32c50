package toolreplay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/aymanbagabas/go-udiff"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/sessionview"
)

// Statuses of a rerun call.
const (
	StatusSame        = "same"
	StatusChanged     = "changed"
	StatusNowFails    = "now fails"
	StatusNowSucceeds = "now succeeds"
	// StatusSkipped: not run now (it never ran in the recording, its
	// arguments are lost, or the permission mode or the trifecta
	// interlock refused it), so not compared, and not counted as the same.
	StatusSkipped = "skipped"
	// StatusUnrecorded: run now, but the recording has no result to
	// compare with.
	StatusUnrecorded = "unrecorded"
)

// Result is one call of a rerun.
type Result struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Status string `json:"status"`
	// Diff is a unified diff of the recorded result against today's, for
	// a result that differs (after masking).
	Diff string `json:"diff,omitempty"`
	// Reason says why a call was skipped.
	Reason string `json:"reason,omitempty"`

	Input   json.RawMessage `json:"-"`
	Now     tool.Result     `json:"-"`
	Started time.Time       `json:"-"`
	Took    time.Duration   `json:"-"`
}

// Differs reports whether the call's result differs from the recording.
func (r Result) Differs() bool {
	switch r.Status {
	case StatusChanged, StatusNowFails, StatusNowSucceeds:
		return true
	}
	return false
}

// Report is a whole rerun.
type Report struct {
	Session string `json:"session"`
	// Rerun is the session the rerun was recorded as ("" when none).
	Rerun   string   `json:"rerun,omitempty"`
	Calls   int      `json:"calls"`
	Same    int      `json:"same"`
	Changed int      `json:"changed"`
	Skipped int      `json:"skipped"`
	Results []Result `json:"results"`
}

// RerunOptions shape a rerun.
type RerunOptions struct {
	// Tools are today's tools, gated as the caller chose.
	Tools *tool.Registry
	// Ignore masks the matches of each expression, in recorded and new
	// results alike, before they are compared.
	Ignore []*regexp.Regexp
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Done, when set, is told each call as soon as it was run or skipped
	// (to record it, to show progress). An error stops the rerun.
	Done func(Call, Result) error
	// Tracker, when set, is the taint tracker of Tools: the calls of one
	// recorded message are judged together, as the agent loop judges one
	// answer's, and before each call is redone the tracker takes on the
	// taint the recording had then (Call.Taint), so the interlock judges
	// the call at least as the recording's conversation stood, whatever
	// the rerun cannot redo (a learned rule's privacy, a subagent's
	// findings, an imported start).
	Tracker *tool.Tracker
}

// Rerun redoes the calls in order against today's tools, with no model,
// and compares each new result with the recorded one.
func Rerun(ctx context.Context, c *Calls, o RerunOptions) (*Report, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	rep := &Report{Session: c.Meta.ID, Calls: len(c.Calls), Results: []Result{}}
	batch := 0
	for _, call := range c.Calls {
		r := Result{Index: call.Index, Name: call.Name, Input: call.Input}
		if call.Expect == Skip {
			r.Status, r.Reason = StatusSkipped, call.Note
		} else {
			batch = o.judge(call, batch)
			r.Started = now()
			res, err := Invoke(ctx, o.Tools, call.Name, call.Input)
			r.Took = now().Sub(r.Started)
			switch {
			case errors.Is(err, ErrUnknownTool):
				res = tool.Result{Content: err.Error(), IsError: true}
			case err != nil:
				return rep, err
			}
			r.Now = res
			r.Status, r.Reason, r.Diff = compare(call, res, o.Ignore)
		}
		switch {
		case r.Status == StatusSame:
			rep.Same++
		case r.Status == StatusSkipped:
			rep.Skipped++
		case r.Differs():
			rep.Changed++
		}
		rep.Results = append(rep.Results, r)
		if o.Done != nil {
			if err := o.Done(call, r); err != nil {
				return rep, err
			}
		}
	}
	return rep, nil
}

// judge readies the Tracker for a call about to be redone: the calls one
// message made (batch: the line of the last call's message) are judged
// together by the state before the first of them, as the agent loop
// judges the calls of one answer, the recording's taint at the call is
// merged in, and the hosts the run trusted at it (Call.TrustedHosts) are
// trusted. It returns the call's batch.
func (o RerunOptions) judge(call Call, batch int) int {
	if o.Tracker == nil {
		return batch
	}
	if call.Line == 0 || call.Line != batch {
		o.Tracker.Turn()
	}
	o.Tracker.TrustHosts(call.TrustedHosts...)
	switch {
	case call.TaintUnknown:
		o.Tracker.Start(call.Taint, fmt.Sprintf("the recording, whose taint before call %d is unknown, so never clean", call.Index))
	case !call.Taint.Clean():
		o.Tracker.Start(call.Taint, fmt.Sprintf("the recording, before call %d", call.Index))
	}
	return call.Line
}

// compare says how a new result stands against the recorded one.
func compare(call Call, now tool.Result, ignore []*regexp.Regexp) (status, reason, diff string) {
	vc := sessionview.Call{Result: &sessionview.Result{Content: now.Content, IsError: now.IsError}}
	switch vc.Outcome() {
	case sessionview.Denied, sessionview.Refused, sessionview.Interlocked:
		return StatusSkipped, now.Content, ""
	}
	if call.Expect == Unrecorded || !call.HasResult {
		return StatusUnrecorded, "", ""
	}
	was, is := Mask(call.Result, ignore), Mask(now.Content, ignore)
	switch {
	case !call.IsError && now.IsError:
		status = StatusNowFails
	case call.IsError && !now.IsError:
		status = StatusNowSucceeds
	case was == is:
		return StatusSame, "", ""
	default:
		status = StatusChanged
	}
	diff = Diff(was, is, fmt.Sprintf("call %d %s (recorded)", call.Index, call.Name), fmt.Sprintf("call %d %s (now)", call.Index, call.Name))
	return status, "", diff
}

// Mask replaces every match of each expression with "<ignored>".
func Mask(s string, ignore []*regexp.Regexp) string {
	for _, re := range ignore {
		s = re.ReplaceAllLiteralString(s, "<ignored>")
	}
	return s
}

// Diff is a unified diff of two texts, with three lines of context; a
// text that does not end in a newline is marked as diff -u marks it
// ("\ No newline at end of file").
func Diff(a, b, nameA, nameB string) string {
	return udiff.Unified(nameA, nameB, a, b)
}
