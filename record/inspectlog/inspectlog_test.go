package inspectlog

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func msg(role string, at time.Duration, blocks ...transcript.Block) *transcript.Message {
	return &transcript.Message{Role: role, Content: blocks, At: t0.Add(at)}
}

// child is a subagent's session: one call (whose input is not an
// object), a failed result, steering beside it, a second attach under
// another prompt, and a summary.
func child() *session.Session {
	p1, p2 := "Be brief.", "Be thorough."
	return &session.Session{Meta: transcript.Meta{ID: "c1", CreatedAt: t0, Provider: "anthropic", Model: "claude", Title: "sub",
		Parent: &transcript.ParentCall{Session: "p1", CallID: "call_9"}},
		Records: []transcript.Record{
			&transcript.Config{Provider: "anthropic", Model: "claude", SystemPrompt: &p1, At: t0},
			msg(transcript.RoleUser, time.Second, transcript.TextBlock("read x")),
			msg(transcript.RoleAssistant, 2*time.Second, transcript.Block{Type: transcript.BlockThinking, Thinking: "hm", Signature: "sig"},
				transcript.TextBlock("Reading."), transcript.ToolUseBlock("t1", "fs_read", json.RawMessage(`"x"`))),
			msg(transcript.RoleUser, 3*time.Second, transcript.ToolResultBlock("t1", "no such file", true), transcript.TextBlock("try y")),
			&transcript.Taint{Private: true, At: t0.Add(3 * time.Second)},
			&transcript.Config{Provider: "anthropic", Model: "claude", SystemPrompt: &p2},
			msg(transcript.RoleAssistant, 4*time.Second, transcript.TextBlock("Nothing there.")),
			&transcript.Summary{Usage: transcript.Usage{InputTokens: 100, OutputTokens: 10, CacheReadTokens: 50}, StopReason: "end_turn", At: t0.Add(5 * time.Second)},
		}}
}

func TestFromSession(t *testing.T) {
	t.Parallel()
	prices := pricing.Table{"anthropic": {"claude": {Input: 1, Output: 10}}}
	s := FromSession(child(), prices)
	var roles []string
	for _, m := range s.Messages {
		roles = append(roles, m.Role)
	}
	if want := []string{"system", "user", "assistant", "tool", "user", "system", "assistant"}; !slices.Equal(roles, want) {
		t.Fatalf("roles %q, want %q", roles, want)
	}
	a := s.Messages[2]
	parts, ok := a.Content.([]Content)
	if !ok || len(parts) != 2 || parts[0].Type != "reasoning" || parts[0].Signature != "sig" || parts[1].Text != "Reading." || a.Model != "claude" {
		t.Errorf("assistant %+v", a)
	}
	if tc := a.ToolCalls[0]; tc.Function != "fs_read" || string(tc.Arguments) != "{}" || !strings.Contains(tc.ParseError, `"x"`) {
		t.Errorf("call %+v", tc)
	}
	if tm := s.Messages[3]; tm.ToolCallID != "t1" || tm.Function != "fs_read" || tm.Error == nil || tm.Error.Message != "no such file" {
		t.Errorf("tool message %+v", tm)
	}
	if s.Input != "read x" || s.Output.Completion != "Nothing there." || s.Output.Choices[0].StopReason != "stop" {
		t.Errorf("input %q output %+v", s.Input, s.Output)
	}
	u := s.ModelUsage["anthropic/claude"]
	if u.InputTokens != 150 || u.OutputTokens != 10 || *u.InputCacheRead != 50 || u.TotalCost == nil {
		t.Errorf("usage %+v", u)
	}
	if s.Metadata["parent"].(map[string]string)["call_id"] != "call_9" || s.Metadata["taint"].(map[string]bool)["private"] != true {
		t.Errorf("metadata %v", s.Metadata)
	}
	if s.StartedAt != "2026-12-01T10:00:00.000000+00:00" || *s.TotalTime != 5 {
		t.Errorf("times %s %v", s.StartedAt, *s.TotalTime)
	}
}

// TestNew: the log's dataset lists each id once, its epochs are the
// most of any sample, its stats span the samples and add their usage,
// it always has results, and its id is stable.
func TestNew(t *testing.T) {
	t.Parallel()
	a := FromSession(child(), nil)
	b := a
	b.Epoch = 2
	l := New("mecha-regress", "anthropic/claude", "v1", t0.Add(time.Hour), []Sample{a, b})
	if !slices.Equal(l.Eval.Dataset.SampleIDs, []string{"c1"}) || l.Eval.Dataset.Samples != 1 || l.Eval.Config.Epochs != 2 {
		t.Errorf("dataset %+v, epochs %d", l.Eval.Dataset, l.Eval.Config.Epochs)
	}
	if l.Results == nil || l.Results.TotalSamples != 2 || l.Stats.ModelUsage["anthropic/claude"].InputTokens != 300 {
		t.Errorf("results %+v, stats %+v", l.Results, l.Stats)
	}
	if l.Stats.StartedAt != "2026-12-01T10:00:00.000000+00:00" || l.Stats.CompletedAt != "2026-12-01T10:00:05.000000+00:00" {
		t.Errorf("stats %+v", l.Stats)
	}
	if again := New("mecha-regress", "anthropic/claude", "v1", t0.Add(time.Hour), []Sample{a, b}); again.Eval.RunID != l.Eval.RunID || l.Eval.RunID == "" {
		t.Errorf("run ids %q %q", l.Eval.RunID, again.Eval.RunID)
	}
	var buf bytes.Buffer
	if err := Write(&buf, l); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["version"] != float64(2) || back["status"] != "success" {
		t.Errorf("written %v %v", err, back["version"])
	}
}

// TestStopReason: mecha's and the providers' own stop reasons as
// Inspect's; a final message that calls tools stopped for them.
func TestStopReason(t *testing.T) {
	t.Parallel()
	calls := Message{ToolCalls: []ToolCall{{ID: "a"}}}
	for _, tc := range []struct {
		stop string
		last Message
		want string
	}{
		{"end_turn", Message{}, "stop"}, {"stop", Message{}, "stop"}, {"end_turn", calls, "tool_calls"},
		{"tool_use", Message{}, "tool_calls"}, {"tool_calls", Message{}, "tool_calls"},
		{"max_tokens", Message{}, "max_tokens"}, {"length", Message{}, "max_tokens"},
		{"refusal", Message{}, "content_filter"}, {"", Message{}, "unknown"}, {"imported", Message{}, "unknown"},
	} {
		if got := stopReason(tc.stop, tc.last); got != tc.want {
			t.Errorf("stopReason(%q) = %q, want %q", tc.stop, got, tc.want)
		}
	}
}
