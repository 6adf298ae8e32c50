package harness

import (
	"testing"

	"github.com/mecha-agent/mecha/engine/agent"
	"github.com/mecha-agent/mecha/record/transcript"
)

func TestLearnedTaint(t *testing.T) {
	private := "prompt\n\nRules learned from earlier sessions:\n- Read first. <!-- mecha: private; from: R1 -->"
	sourced := "prompt\n\nRules learned from earlier sessions:\n- Read first. <!-- mecha: from: R1 -->\n- By hand."
	for _, tc := range []struct {
		name    string
		prompt  *string
		start   agent.History
		want    transcript.Taint
		wantWhy string
	}{
		{"private rule", &private, agent.History{}, transcript.Taint{Private: true}, "the system prompt's learned rules from private sessions"},
		// The control: the same rule not marked private starts clean.
		{"rule not private", &sourced, agent.History{}, transcript.Taint{}, ""},
		{"no prompt", nil, agent.History{}, transcript.Taint{}, ""},
		{"resumed untrusted", &private, agent.History{Taint: transcript.Taint{Untrusted: true}, TaintWhy: "an earlier run of this session"},
			transcript.Taint{Private: true, Untrusted: true}, "an earlier run of this session; the system prompt's learned rules from private sessions"},
		{"resumed private", &private, agent.History{Taint: transcript.Taint{Private: true}, TaintWhy: "x"}, transcript.Taint{Private: true}, "x"},
	} {
		h := learnedTaint(tc.start, transcript.Config{SystemPrompt: tc.prompt})
		if h.Taint != tc.want || h.TaintWhy != tc.wantWhy {
			t.Errorf("%s: %+v %q, want %+v %q", tc.name, h.Taint, h.TaintWhy, tc.want, tc.wantWhy)
		}
	}
}
