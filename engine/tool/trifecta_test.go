package tool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

var (
	readCaps  = Capabilities{ReadsWorkspace: true}
	fetchCaps = Capabilities{ReachesNetwork: true, External: true}
	shellCaps = Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true, External: true}
	// confinedCaps is a shell in a sandbox without the network.
	confinedCaps = Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true}
)

// surface is a run's tools as BuildTools decorates them: interlock, gate
// (in yes mode here), tracker.
type surface struct {
	tr    *Tracker
	fakes map[string]*fakeTool
	tools map[string]Tool
}

func newSurface(policy Trifecta, asker Asker, caps map[string]Capabilities) *surface {
	s := &surface{tr: &Tracker{}, fakes: map[string]*fakeTool{}, tools: map[string]Tool{}}
	for name, c := range caps {
		f := &fakeTool{name: name, caps: c}
		s.fakes[name] = f
		s.tools[name] = Interlock(Gate(s.tr.Wrap(f), ModeYes, nil), policy, s.tr, asker)
	}
	return s
}

func (s *surface) call(t *testing.T, name string) Result {
	t.Helper()
	res, err := s.tools[name].Run(context.Background(), []byte(`{}`))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func TestParseTrifecta(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Trifecta{"": TrifectaRefuse, "refuse": TrifectaRefuse, "ask": TrifectaAsk, "off": TrifectaOff} {
		if got, err := ParseTrifecta(in); err != nil || got != want {
			t.Errorf("ParseTrifecta(%q) = %q, %v", in, got, err)
		}
	}
	for _, in := range []string{"on", "Refuse", "no"} {
		if _, err := ParseTrifecta(in); err == nil {
			t.Errorf("ParseTrifecta(%q) accepted", in)
		}
	}
}

// TestInterlockRefusesWhenArmed is the attack in miniature: read a private
// file, fetch a hostile page, then try to send: refused under refuse, and
// (the control) run under off.
func TestInterlockRefusesWhenArmed(t *testing.T) {
	t.Parallel()
	caps := map[string]Capabilities{"fs_read": readCaps, "web_fetch": fetchCaps, "shell": shellCaps}
	s := newSurface(TrifectaRefuse, nil, caps)
	// Neither private nor untrusted alone arms it.
	s.call(t, "fs_read")
	if res := s.call(t, "web_fetch"); res.IsError {
		t.Fatalf("private only: %q", res.Content)
	}
	res := s.call(t, "web_fetch")
	want := "refused: lethal trifecta: the conversation holds private data (fs_read read the workspace) and untrusted content (web_fetch brought in content from outside); web_fetch could send it out: it reaches the network. The call was not run (--trifecta refuse)."
	if !res.IsError || res.Content != want {
		t.Errorf("armed web_fetch = %+v,\nwant %q", res, want)
	}
	if res := s.call(t, "shell"); !res.IsError || !strings.Contains(res.Content, "shell could send it out: it runs commands with the network available.") {
		t.Errorf("armed shell = %+v", res)
	}
	if s.fakes["web_fetch"].runs != 1 || s.fakes["shell"].runs != 0 {
		t.Errorf("runs: web_fetch %d, shell %d; want 1, 0", s.fakes["web_fetch"].runs, s.fakes["shell"].runs)
	}
	// A tool that cannot leak still runs.
	if res := s.call(t, "fs_read"); res.IsError {
		t.Errorf("armed fs_read = %q", res.Content)
	}

	off := newSurface(TrifectaOff, nil, caps)
	off.call(t, "fs_read")
	off.call(t, "web_fetch")
	if res := off.call(t, "web_fetch"); res.IsError || off.fakes["web_fetch"].runs != 2 {
		t.Errorf("off: %+v, %d runs", res, off.fakes["web_fetch"].runs)
	}
}

// TestInterlockOrderDoesNotMatter arms the conversation the other way
// round: untrusted first, then private.
func TestInterlockOrderDoesNotMatter(t *testing.T) {
	t.Parallel()
	s := newSurface(TrifectaRefuse, nil, map[string]Capabilities{"fs_read": readCaps, "web_fetch": fetchCaps})
	s.call(t, "web_fetch")
	s.call(t, "fs_read")
	if res := s.call(t, "web_fetch"); !res.IsError || !strings.HasPrefix(res.Content, RefusalPrefix) {
		t.Errorf("armed: %+v", res)
	}
}

// TestInterlockBelievesCapabilitiesAtCallTime: a shell that is confined
// without the network when called runs in an armed conversation; the same
// shell with the network is refused.
func TestInterlockBelievesCapabilitiesAtCallTime(t *testing.T) {
	t.Parallel()
	s := newSurface(TrifectaRefuse, nil, map[string]Capabilities{"shell": confinedCaps})
	s.tr.Start(transcript.Taint{Private: true, Untrusted: true}, "an earlier run of this session")
	if res := s.call(t, "shell"); res.IsError {
		t.Errorf("confined shell refused: %q", res.Content)
	}
	s.fakes["shell"].caps = shellCaps // the sandbox is gone
	res := s.call(t, "shell")
	if !res.IsError || !strings.Contains(res.Content, "(an earlier run of this session) and untrusted content (an earlier run of this session)") {
		t.Errorf("unconfined shell: %+v", res)
	}
}

func TestInterlockAsk(t *testing.T) {
	t.Parallel()
	caps := map[string]Capabilities{"web_fetch": fetchCaps}
	armed := transcript.Taint{Private: true, Untrusted: true}
	for _, tt := range []struct {
		name    string
		asker   Asker
		runs    int
		suffix  string
		wantErr bool
	}{
		{"yes", &fakeAsker{allow: true}, 1, "", false},
		{"no", &fakeAsker{}, 0, "The call was not run: the user said no (--trifecta ask).", false},
		{"no terminal", nil, 0, "The call was not run: --trifecta ask, and no terminal to ask.", false},
		{"asking failed", &fakeAsker{err: errors.New("tty gone")}, 0, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSurface(TrifectaAsk, tt.asker, caps)
			s.tr.Start(armed, "resumed")
			res, err := s.tools["web_fetch"].Run(context.Background(), []byte(`{"url":"x"}`))
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v", err)
			}
			if s.fakes["web_fetch"].runs != tt.runs {
				t.Errorf("%d runs, want %d", s.fakes["web_fetch"].runs, tt.runs)
			}
			if tt.suffix != "" && (!res.IsError || !strings.HasPrefix(res.Content, RefusalPrefix) || !strings.HasSuffix(res.Content, tt.suffix)) {
				t.Errorf("result %+v, want one ending %q", res, tt.suffix)
			}
			if a, ok := tt.asker.(*fakeAsker); ok {
				if len(a.asked) != 1 || !strings.HasPrefix(a.asked[0].Reason, RefusalPrefix) || a.asked[0].Tool != "web_fetch" {
					t.Errorf("asked %+v", a.asked)
				}
			}
		})
	}
}

func TestInterlockUnknownPolicyFailsClosed(t *testing.T) {
	t.Parallel()
	s := newSurface("maybe", nil, map[string]Capabilities{"web_fetch": fetchCaps})
	s.tr.Start(transcript.Taint{Private: true, Untrusted: true}, "resumed")
	if res := s.call(t, "web_fetch"); !res.IsError || !strings.HasSuffix(res.Content, `unknown trifecta policy "maybe".`) || s.fakes["web_fetch"].runs != 0 {
		t.Errorf("%+v", res)
	}
}

// TestInterlockRefusalIsNotCounted: a refused call does not taint, and the
// gate never asks about it.
func TestInterlockRefusalIsNotCounted(t *testing.T) {
	t.Parallel()
	tr := &Tracker{}
	tr.Start(transcript.Taint{Private: true}, "resumed")
	asker := &fakeAsker{allow: true}
	f := &fakeTool{name: "mcp__x__fetch", caps: shellCaps}
	// The tool itself would make it untrusted only if it ran.
	tl := Interlock(Gate(tr.Wrap(f), ModeAsk, asker), TrifectaRefuse, tr, nil)
	if res, _ := tl.Run(context.Background(), nil); res.IsError {
		t.Fatalf("private only, first call: %q", res.Content)
	}
	if !tr.Taint().Untrusted || len(asker.asked) != 1 {
		t.Fatalf("taint %+v, asked %d", tr.Taint(), len(asker.asked))
	}
	res, _ := tl.Run(context.Background(), nil)
	if !res.IsError || !strings.Contains(res.Content, "untrusted content (mcp__x__fetch brought in content from outside)") {
		t.Errorf("second call: %+v", res)
	}
	if len(asker.asked) != 1 || f.runs != 1 {
		t.Errorf("the refused call was asked about (%d) or ran (%d)", len(asker.asked), f.runs)
	}
}

func TestTrackerState(t *testing.T) {
	t.Parallel()
	tr := &Tracker{}
	tr.Start(transcript.Taint{Untrusted: true}, "an earlier run")
	tr.add("fs_read", readCaps)
	tr.add("fs_list", readCaps)
	st := tr.State()
	if st.PrivateBy != "fs_read read the workspace" || st.UntrustedBy != "an earlier run" || !st.Taint.Private || !st.Taint.Untrusted {
		t.Errorf("%+v", st)
	}
}

// TestInterlockJudgesCallsByTheirTurn: calls made together are judged by
// the state before any of them ran; the next turn's calls see their taint.
func TestInterlockJudgesCallsByTheirTurn(t *testing.T) {
	t.Parallel()
	s := newSurface(TrifectaRefuse, nil, map[string]Capabilities{"mcp": shellCaps, "web_fetch": fetchCaps})
	s.tr.Turn()
	// One answer: the all-capable tool, then a fetch; the fetch was chosen
	// before the first result was seen.
	s.call(t, "mcp")
	if res := s.call(t, "web_fetch"); res.IsError {
		t.Fatalf("same turn: %q", res.Content)
	}
	s.tr.Turn()
	if res := s.call(t, "web_fetch"); !res.IsError || !strings.Contains(res.Content, "(mcp read the workspace) and untrusted content (mcp brought in content from outside)") {
		t.Errorf("next turn: %+v", res)
	}
}
