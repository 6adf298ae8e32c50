package session

import "github.com/mecha-agent/mecha/record/transcript"

// Taint returns the merge of every taint checkpoint in the session. A
// transcript with none (written before checkpoints existed) is clean by
// this measure; use TaintTimeline to tell covered messages from unknown.
func (s *Session) Taint() transcript.Taint {
	var t transcript.Taint
	for _, r := range s.Records {
		if c, ok := r.(*transcript.Taint); ok {
			t = t.Merge(*c)
		}
	}
	return t
}

// Coverage is what is known of the provenance of one message.
type Coverage struct {
	// Known is false when no checkpoint was written after the message.
	Known bool
	// Taint is the merged state of every checkpoint up to and including the
	// first one written after the message. Meaningless when !Known.
	Taint transcript.Taint
}

// Clean reports whether the message is known to be clean. Unknown
// provenance is never clean.
func (c Coverage) Clean() bool { return c.Known && c.Taint.Clean() }

// TaintTimeline returns, for each message in Messages() order, the
// checkpoint covering it: the first one written after it, merged with
// every earlier one. Because a checkpoint is written after all the messages
// of its run, this can over-taint a message but never under-taint it.
func (s *Session) TaintTimeline() []Coverage {
	var (
		out     []Coverage
		pending int // messages not yet covered by a checkpoint
		merged  transcript.Taint
	)
	for _, r := range s.Records {
		switch r := r.(type) {
		case *transcript.Message:
			out = append(out, Coverage{})
			pending++
		case *transcript.Taint:
			merged = merged.Merge(*r)
			for i := len(out) - pending; i < len(out); i++ {
				out[i] = Coverage{Known: true, Taint: merged}
			}
			pending = 0
		}
	}
	return out
}

// StartTaint is the taint a run resumed from s starts from: the merge of
// every checkpoint, or, when any message has no checkpoint after it (an
// older build, a run killed before its checkpoint), private and untrusted
// both: unknown provenance is never clean. Uncovered is the number of such
// messages.
func (s *Session) StartTaint() (t transcript.Taint, uncovered int) {
	t = s.Taint()
	for _, c := range s.TaintTimeline() {
		if !c.Known {
			uncovered++
		}
	}
	if uncovered > 0 {
		t = transcript.Taint{Private: true, Untrusted: true}
	}
	return t, uncovered
}
