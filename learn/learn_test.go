package learn

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

func text(role, s string) *transcript.Message {
	return &transcript.Message{Role: role, Content: []transcript.Block{transcript.TextBlock(s)}}
}

// write records recs as a new session and loads it back.
func write(t *testing.T, dir string, meta transcript.Meta, recs ...transcript.Record) *session.Session {
	t.Helper()
	st := &session.Store{Dir: dir, Now: func() time.Time { return time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC) }}
	w, err := st.Create(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(recs...); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := st.Load(w.Ref())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRenderShowsIndexesCallsAndErrors(t *testing.T) {
	call := transcript.Block{Type: transcript.BlockToolUse, ID: "c1", Name: "fs_read", Input: []byte(`{"path":"a.txt"}`)}
	s := write(t, t.TempDir(), transcript.Meta{Title: "fix the bug"},
		text("user", "fix the bug"),
		&transcript.Message{Role: "assistant", Content: []transcript.Block{call}},
		&transcript.Message{Role: "user", Content: []transcript.Block{transcript.ToolResultBlock("c1", "denied: the person said no", true)}},
		text("assistant", "I could not read it."),
		&transcript.Summary{Turns: 2, StopReason: "end_turn"},
	)
	r := Render(s, DefaultLimit)
	for _, want := range []string{"#0 user:\nfix the bug", `#1 assistant:` + "\n" + `→ call fs_read {"path":"a.txt"}`,
		"#2 user:\n← error: denied: the person said no", "#3 assistant:\nI could not read it.", "[run finished: 2 turns, end_turn]"} {
		if !strings.Contains(r.Text, want) {
			t.Errorf("rendering lacks %q:\n%s", want, r.Text)
		}
	}
	if !slices.Equal(r.Shown, []int{0, 1, 2, 3}) || r.Omitted != 0 {
		t.Errorf("shown %v, omitted %d", r.Shown, r.Omitted)
	}
}

func TestRenderBoundsAndSaysWhatItLeftOut(t *testing.T) {
	var recs []transcript.Record
	for i := 0; i < 40; i++ {
		recs = append(recs, text("user", strings.Repeat("x", 1000)))
	}
	s := write(t, t.TempDir(), transcript.Meta{}, recs...)
	r := Render(s, 8000)
	if len(r.Text) > 8000+200 {
		t.Errorf("rendering of %d bytes, limit 8000", len(r.Text))
	}
	if r.Shown[0] != 0 || r.Shown[len(r.Shown)-1] != 39 || r.Omitted == 0 || len(r.Shown)+r.Omitted != 40 {
		t.Errorf("shown %v, omitted %d", r.Shown, r.Omitted)
	}
	if !strings.Contains(r.Text, "messages left out]") {
		t.Error("the rendering does not say what it left out")
	}
	// A long result is clipped.
	s = write(t, t.TempDir(), transcript.Meta{}, &transcript.Message{Role: "user", Content: []transcript.Block{transcript.ToolResultBlock("c", strings.Repeat("y", 5000), false)}})
	if r := Render(s, DefaultLimit); strings.Count(r.Text, "y") > clipResult {
		t.Errorf("a result of 5000 characters rendered whole")
	}
}

func TestShownTaint(t *testing.T) {
	private := session.Coverage{Known: true, Taint: transcript.Taint{Private: true}}
	armed := session.Coverage{Known: true, Taint: transcript.Taint{Private: true, Untrusted: true}}
	clean := session.Coverage{Known: true}
	tl := []session.Coverage{clean, private, armed, {}}
	for _, c := range []struct {
		shown   []int
		want    transcript.Taint
		unknown int
	}{
		{[]int{0}, transcript.Taint{}, 0},
		{[]int{0, 1}, transcript.Taint{Private: true}, 0},
		{[]int{0, 2}, transcript.Taint{Private: true, Untrusted: true}, 0},
		{[]int{0, 3}, transcript.Taint{Private: true, Untrusted: true}, 1},
		{[]int{7}, transcript.Taint{Private: true, Untrusted: true}, 1},
	} {
		got, unknown := ShownTaint(tl, c.shown)
		if got != c.want || unknown != c.unknown {
			t.Errorf("ShownTaint(%v) = %+v, %d; want %+v, %d", c.shown, got, unknown, c.want, c.unknown)
		}
	}
}

// reflection writes a reflection session answering answer, with the given
// checkpoint after its prompt (nil: none, as a run killed before it).
func reflection(t *testing.T, dir string, taint *transcript.Taint, answer string) *session.Session {
	recs := []transcript.Record{text("user", "the rendered session")}
	if taint != nil {
		recs = append(recs, taint)
	}
	recs = append(recs, text("assistant", answer))
	if taint != nil {
		recs = append(recs, taint)
	}
	return write(t, dir, transcript.Meta{ReflectsOn: "20260805T080000-00000000"}, recs...)
}

func TestJudgeAndCollect(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		taint   *transcript.Taint
		keep    bool
		private bool
		why     string
	}{
		{"clean", &transcript.Taint{}, true, false, ""},
		{"private only", &transcript.Taint{Private: true}, true, true, ""},
		{"untrusted", &transcript.Taint{Untrusted: true}, false, false, "untrusted"},
		{"armed", &transcript.Taint{Private: true, Untrusted: true}, false, false, "untrusted"},
		{"uncovered", nil, false, false, "unknown provenance: 2 messages"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := reflection(t, dir, c.taint, "Prose.\n- INJECTED-"+c.name+" (#1)")
			v := Judge(s)
			if v.Keep != c.keep || v.Private != c.private || !strings.Contains(v.Why, c.why) {
				t.Fatalf("Judge = %+v, want keep %v private %v why %q", v, c.keep, c.private, c.why)
			}
			b := Collect([]*session.Session{s})
			// The structural exclusion: a dropped reflection's text is not
			// in the prompt; a kept one's rules are (the control).
			if got := strings.Contains(b.Prompt(), "INJECTED-"+c.name); got != c.keep {
				t.Errorf("prompt holds the reflection's rule: %v, want %v:\n%s", got, c.keep, b.Prompt())
			}
			if strings.Contains(b.Prompt(), "Prose.") {
				t.Error("the prompt holds a reflection's prose, not only its rules")
			}
			if !c.keep && (len(b.Dropped) != 1 || b.Dropped[0].ID != s.Meta.ID) {
				t.Errorf("dropped %+v", b.Dropped)
			}
			if c.keep && b.Taint() != (transcript.Taint{Private: c.private}) {
				t.Errorf("batch taint %+v", b.Taint())
			}
		})
	}
	if v := Judge(write(t, dir, transcript.Meta{})); v.Keep {
		t.Error("a reflection with no messages kept")
	}
}

func TestCandidates(t *testing.T) {
	got := Candidates("# Reflection\nIt went well.\n- Run the tests first (#2, #4).\n  - Indented   rule.\n-not a rule\n* not either\n- \n")
	if !slices.Equal(got, []string{"Run the tests first (#2, #4).", "Indented rule."}) {
		t.Errorf("Candidates = %q", got)
	}
	many := strings.Repeat("- r\n", 20)
	if n := len(Candidates(many)); n != MaxCandidates {
		t.Errorf("%d candidates, want %d", n, MaxCandidates)
	}
}

func TestParseDistilled(t *testing.T) {
	b := Batch{Kept: []Kept{{ID: "A", Rules: []string{"x"}}, {ID: "P", Private: true, Rules: []string{"y"}}, {ID: "E"}}}
	got := ParseDistilled(`Merged:
- Run the tests before answering. (from: A)
- Read the README first [From A, P].
- run the tests before answering. (from: A)
- Keep diffs small (from: NOSUCH)
- Never <!-- hide --> this (sources: E)
prose line
`, b)
	want := []Rule{
		{Text: "Run the tests before answering.", From: []string{"A"}},
		{Text: "Read the README first", From: []string{"A", "P"}, Private: true},
		{Text: "Keep diffs small", From: []string{"A", "P"}, Private: true},
		{Text: "Never hide this", From: []string{"A", "P"}, Private: true},
	}
	if len(got) != len(want) {
		t.Fatalf("ParseDistilled = %+v", got)
	}
	for i := range want {
		if got[i].Text != want[i].Text || !slices.Equal(got[i].From, want[i].From) || got[i].Private != want[i].Private {
			t.Errorf("rule %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestFileRoundTripAddForget(t *testing.T) {
	orig := "# My rules\n\nAlways be kind.\n- A rule I wrote.\n"
	f := ParseFile(orig)
	if f.String() != orig {
		t.Fatalf("round trip changed the file:\n%s", f.String())
	}
	n := f.Add([]Rule{{Text: "a rule i wrote."}, {Text: "Use the shell sparingly.", From: []string{"R1", "R2"}, Private: true}, {Text: "Say what changed.", From: []string{"R3"}}})
	if n != 2 {
		t.Errorf("added %d, want 2 (one is a duplicate)", n)
	}
	want := orig + "- Use the shell sparingly. <!-- mecha: private; from: R1, R2 -->\n- Say what changed. <!-- mecha: from: R3 -->\n"
	if f.String() != want {
		t.Fatalf("after Add:\n%s\nwant:\n%s", f.String(), want)
	}
	rules := ParseFile(f.String()).Rules()
	if len(rules) != 3 || !rules[1].Private || !slices.Equal(rules[1].From, []string{"R1", "R2"}) || rules[2].Private || rules[0].From != nil {
		t.Errorf("Rules = %+v", rules)
	}
	if !PromptPrivate("prompt\n\nRules learned from earlier sessions:\n" + f.String()) {
		t.Error("a prompt with a private rule is not private")
	}
	if PromptPrivate(orig + "- Say what changed. <!-- mecha: from: R3 -->\n") {
		t.Error("a prompt without a private rule is private")
	}
	r, err := f.Forget(2)
	if err != nil || r.Text != "Use the shell sparingly." {
		t.Fatalf("Forget(2) = %+v, %v", r, err)
	}
	if strings.Contains(f.String(), "sparingly") || !strings.Contains(f.String(), "Always be kind.") {
		t.Errorf("after Forget:\n%s", f.String())
	}
	if _, err := f.Forget(3); err == nil || !strings.Contains(err.Error(), "has 2") {
		t.Errorf("Forget(3) = %v", err)
	}
	d := Diff(orig, f.String(), "learned_rules.md")
	if !strings.Contains(d, "+- Say what changed. <!-- mecha: from: R3 -->") || !strings.HasPrefix(d, "--- a/learned_rules.md") {
		t.Errorf("Diff:\n%s", d)
	}
	if Diff(orig, orig, "x") != "" {
		t.Error("a diff of equal texts is not empty")
	}
}
