package sessionview

import (
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// Stream reads the transcript at path once, front to back, and hands fn
// its items in file order as it reads them; the totals come back at the
// end. Nothing is held but the exchange a reply's calls are waiting in.
// Costs are at prices (nil prices nothing). The errors are session.Scan's
// (session.ErrNotSession for a file that is not a transcript) and fn's,
// returned as they are.
func Stream(path string, prices pricing.Table, fn func(Item) error) (*Totals, error) {
	b := newBuilder(prices, path, fn)
	sk, err := session.Scan(path, b.add)
	if err != nil {
		return nil, err
	}
	return b.finish(sk)
}

// Walk hands fn the items of a session already loaded, as Stream would
// (their lines are 0: a loaded session does not keep them).
func Walk(s *session.Session, prices pricing.Table, fn func(Item) error) (*Totals, error) {
	b := newBuilder(prices, s.Path, fn)
	if err := b.add(0, &s.Meta); err != nil {
		return nil, err
	}
	for _, r := range s.Records {
		if err := b.add(0, r); err != nil {
			return nil, err
		}
	}
	return b.finish(session.Skips{Count: s.Skipped, Lines: s.SkippedLines, HeaderID: s.HeaderID})
}

// totals reads the transcript for its totals alone: pairing, taint and
// usage, with no items kept.
func totals(path string, prices pricing.Table, fn func(line int, rec transcript.Record) error) (*Totals, error) {
	b := newBuilder(prices, path, nil)
	sk, err := session.Scan(path, func(line int, rec transcript.Record) error {
		if err := b.add(line, rec); err != nil {
			return err
		}
		return fn(line, rec)
	})
	if err != nil {
		return nil, err
	}
	return b.finish(sk)
}

// View is a whole session's view, held in memory: for sessions of a
// reasonable size, tests, and callers that need to look back. Renderers
// use Stream.
type View struct {
	Header *Header
	Items  []Item
	Totals *Totals
}

// Build reads the transcript at path into a View.
func Build(path string, prices pricing.Table) (*View, error) {
	v := &View{}
	t, err := Stream(path, prices, func(it Item) error {
		if h, ok := it.(*Header); ok {
			v.Header = h
		}
		v.Items = append(v.Items, it)
		return nil
	})
	if err != nil {
		return nil, err
	}
	v.Totals = t
	return v, nil
}

// Coverage returns, for each message by Index, the checkpoint covering
// it, as session.TaintTimeline does: the first written after it, merged
// with every earlier one; unknown when none was written after it.
func (v *View) Coverage() []session.Coverage {
	out := make([]session.Coverage, v.Totals.Messages)
	for _, it := range v.Items {
		if c, ok := it.(*Checkpoint); ok {
			for i := c.From; i < c.To; i++ {
				out[i] = session.Coverage{Known: true, Taint: c.Merged}
			}
		}
	}
	return out
}
