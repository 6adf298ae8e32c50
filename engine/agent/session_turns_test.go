package agent

import (
	"context"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestSessionTurnsAcrossResumes: each run's summary carries the session's
// turns so far, its own and the earlier runs' (an older summary without
// the field included), so that listing can read the total off the last
// line; what listing shows equals the full scan's sum, and the per-run
// turns (what stats adds up) stay each run's own.
func TestSessionTurnsAcrossResumes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	st := &session.Store{Dir: dir, Now: func() time.Time { return time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC) }}
	w, err := st.Create(transcript.Meta{Provider: "fake", Model: "fake-1", Title: "resumed"})
	if err != nil {
		t.Fatal(err)
	}
	// A run recorded before session_turns existed.
	if err := w.Append(&transcript.Summary{Turns: 5, StopReason: "end_turn"}); err != nil {
		t.Fatal(err)
	}
	ref := w.Ref()
	w.Close()
	for i, want := range []int{6, 7} {
		s, err := st.Load(ref)
		if err != nil {
			t.Fatal(err)
		}
		p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){answer("ok", u(1, 1))}}
		opts, _ := setup(t, p, transcript.Config{})
		w, err := st.OpenWriter(ref)
		if err != nil {
			t.Fatal(err)
		}
		opts.Recorder, opts.History = w, HistoryOf(s)
		if _, err := Run(context.Background(), opts, "again"); err != nil {
			t.Fatal(err)
		}
		w.Close()
		s, err = st.Load(ref)
		if err != nil {
			t.Fatal(err)
		}
		sums := s.Summaries()
		last := sums[len(sums)-1]
		if last.Turns != 1 || last.SessionTurns == nil || *last.SessionTurns != want {
			t.Fatalf("run %d: summary %+v, want turns 1 and session_turns %d", i+1, last, want)
		}
	}
	got, _, err := st.Totals(nil, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("Totals = %+v, %v", got, err)
	}
	if g := got[0]; !g.Tail || g.Turns != 7 || g.Stop != "end_turn" {
		t.Errorf("listed tail %v turns %d stop %q, want the shortcut with 7 end_turn", g.Tail, g.Turns, g.Stop)
	}
}
