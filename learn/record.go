package learn

import (
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// PromptCovered records like the Lazy it wraps, and appends a taint
// checkpoint right after the first message (the prompt of a reflection or
// a distillation), so that the prompt's provenance is on record before the
// model answers: a run killed while the model is thinking leaves a session
// whose prompt is covered.
type PromptCovered struct {
	*session.Lazy
	Taint transcript.Taint
	Now   func() time.Time
	done  bool
}

// Append appends recs, then the checkpoint after the first message.
func (c *PromptCovered) Append(recs ...transcript.Record) error {
	if err := c.Lazy.Append(recs...); err != nil {
		return err
	}
	if c.done {
		return nil
	}
	for _, r := range recs {
		if _, ok := r.(*transcript.Message); ok {
			c.done = true
			t := c.Taint
			t.At = c.Now().UTC()
			return c.Lazy.Append(&t)
		}
	}
	return nil
}
