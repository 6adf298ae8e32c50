package tool

import (
	"context"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

var (
	// reviewCaps brings in what strangers wrote (a booking site's
	// reviews) and reads nothing of the user's.
	reviewCaps = Capabilities{External: true}
	// payCaps pays: the amount and subject leave, and the payment is an
	// act in the user's name.
	payCaps = Capabilities{ReachesNetwork: true, ActsOutward: true, ModifiesWorkspace: true}
	// notifyCaps cancels a meeting, mailing its participants: nothing
	// chosen by the caller leaves, but others are acted on.
	notifyCaps = Capabilities{ActsOutward: true, ModifiesWorkspace: true}
)

// TestInterlockHoldsActsOnUntrustedContent is the attack AgentDojo's
// travel suite makes: a review (untrusted, nothing private read) tells the
// model to book or pay. The trifecta does not fire (no private data), but
// the call acts in the user's name: refused under the defaults; the
// control, --trifecta off, runs it.
func TestInterlockHoldsActsOnUntrustedContent(t *testing.T) {
	t.Parallel()
	caps := map[string]Capabilities{"reviews": reviewCaps, "send_money": payCaps, "cancel": notifyCaps,
		"web_fetch": fetchCaps, "fs_read": readCaps}
	s := newSurface(TrifectaRefuse, nil, caps)
	if res := s.call(t, "send_money"); res.IsError {
		t.Fatalf("clean conversation: %q", res.Content)
	}
	s.call(t, "reviews")
	res := s.call(t, "send_money")
	want := "refused: lethal trifecta: the conversation holds untrusted content (reviews brought in content from outside); send_money acts outward in the user's name, which that content may have asked for: an action needs no private data to do harm. The call was not run (--trifecta refuse)."
	if !res.IsError || res.Content != want {
		t.Errorf("send_money after a review = %+v,\nwant %q", res, want)
	}
	if res := s.call(t, "cancel"); !res.IsError || !strings.Contains(res.Content, "cancel acts outward in the user's name") {
		t.Errorf("an act that sends nothing: %+v", res)
	}
	if s.fakes["send_money"].runs != 1 || s.fakes["cancel"].runs != 0 {
		t.Errorf("runs: send_money %d, cancel %d; want 1, 0", s.fakes["send_money"].runs, s.fakes["cancel"].runs)
	}
	// A send channel that does not act keeps the trifecta's rule: with
	// nothing private in the conversation, nothing of the user's can leave.
	if res := s.call(t, "web_fetch"); res.IsError {
		t.Errorf("web_fetch, untrusted only: %q", res.Content)
	}
	// Once private data is in too, the refusal of a call that both sends
	// and acts is the trifecta's, the stronger claim.
	s.call(t, "fs_read")
	if res := s.call(t, "send_money"); !res.IsError || !strings.Contains(res.Content, "send_money could send it out: it reaches the network.") {
		t.Errorf("armed send_money: %+v", res)
	}

	off := newSurface(TrifectaOff, nil, caps)
	off.call(t, "reviews")
	if res := off.call(t, "send_money"); res.IsError || off.fakes["send_money"].runs != 1 {
		t.Errorf("control (off): %+v, %d runs", res, off.fakes["send_money"].runs)
	}
}

// TestInterlockLetsActsRunOnPrivateData: private data alone is the user's
// own conversation: the user asked for the payment, nothing outside did.
func TestInterlockLetsActsRunOnPrivateData(t *testing.T) {
	t.Parallel()
	s := newSurface(TrifectaRefuse, nil, map[string]Capabilities{"fs_read": readCaps, "send_money": payCaps})
	s.call(t, "fs_read")
	if res := s.call(t, "send_money"); res.IsError || s.fakes["send_money"].runs != 1 {
		t.Errorf("private only: %+v", res)
	}
}

// TestInterlockAsksAboutActs: under --trifecta ask the acting call is put
// to the person, once even in permission mode ask (an act needs permission
// too), the question carrying both reasons; no and no terminal refuse it.
func TestInterlockAsksAboutActs(t *testing.T) {
	t.Parallel()
	untrusted := transcript.Taint{Untrusted: true}
	for _, tt := range []struct {
		name   string
		asker  *fakeAsker
		runs   int
		suffix string
	}{
		{"yes", &fakeAsker{allow: true}, 1, ""},
		{"no", &fakeAsker{}, 0, "The call was not run: the user said no (--trifecta ask)."},
		{"no terminal", nil, 0, "The call was not run: --trifecta ask, and no terminal to ask."},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var asker Asker
			if tt.asker != nil {
				asker = tt.asker
			}
			f := &fakeTool{name: "send_money", caps: payCaps}
			tr := &Tracker{}
			tr.Start(untrusted, "get_rating_reviews_for_hotels brought in content from outside")
			tl := Policy{Mode: ModeAsk, Trifecta: TrifectaAsk, Asker: asker}.Wrap(f, tr)
			res := runIn(t, tl, `{"recipient":"ATTACKER","amount":100}`)
			if f.runs != tt.runs {
				t.Errorf("ran %d times, want %d", f.runs, tt.runs)
			}
			if tt.suffix != "" && (!res.IsError || !strings.HasPrefix(res.Content, RefusalPrefix) || !strings.HasSuffix(res.Content, tt.suffix)) {
				t.Errorf("result %+v, want one ending %q", res, tt.suffix)
			}
			if tt.asker != nil {
				if len(tt.asker.asked) != 1 {
					t.Fatalf("asked %d times, want once", len(tt.asker.asked))
				}
				req := tt.asker.asked[0]
				if !strings.Contains(req.Reason, "send_money acts outward in the user's name") ||
					req.Permission != "send_money modifies the workspace, reaches the network and acts outward in the user's name" {
					t.Errorf("the question: %+v", req)
				}
			}
		})
	}
}

// TestHeld is the interlock's two rules over every conversation state.
func TestHeld(t *testing.T) {
	t.Parallel()
	st := func(p, u bool) TaintState {
		return TaintState{Taint: transcript.Taint{Private: p, Untrusted: u}, PrivateBy: "p", UntrustedBy: "u"}
	}
	for _, tt := range []struct {
		name string
		caps Capabilities
		st   TaintState
		want string // a part of the reason, "" for none
	}{
		{"send, clean", fetchCaps, st(false, false), ""},
		{"send, private", fetchCaps, st(true, false), ""},
		{"send, untrusted", fetchCaps, st(false, true), ""},
		{"send, armed", fetchCaps, st(true, true), "x could send it out: it reaches the network."},
		{"act, clean", notifyCaps, st(false, false), ""},
		{"act, private", notifyCaps, st(true, false), ""},
		{"act, untrusted", notifyCaps, st(false, true), "untrusted content (u); x acts outward"},
		{"act, armed", notifyCaps, st(true, true), "untrusted content (u); x acts outward"},
		{"both, untrusted", payCaps, st(false, true), "x acts outward"},
		{"both, armed", payCaps, st(true, true), "private data (p) and untrusted content (u); x could send it out"},
		{"neither, armed", readCaps, st(true, true), ""},
	} {
		got := Held(tt.caps, "x", tt.st, nil)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) || got != "" && !strings.HasPrefix(got, RefusalPrefix) {
			t.Errorf("%s: Held = %q, want one with %q", tt.name, got, tt.want)
		}
	}
}

// TestActsNeedPermission: an acting call goes through the permission gate
// like one that reaches the network.
func TestActsNeedPermission(t *testing.T) {
	t.Parallel()
	if !NeedsPermission(Capabilities{ActsOutward: true}) {
		t.Error("an act runs without permission")
	}
	tl := Gate(&fakeTool{name: "cancel", caps: Capabilities{ActsOutward: true}}, ModeReadOnly, nil)
	res, err := tl.Run(context.Background(), nil)
	if err != nil || !res.IsError || !strings.Contains(res.Content, "cancel acts outward in the user's name") {
		t.Errorf("read-only: %+v, %v", res, err)
	}
}
