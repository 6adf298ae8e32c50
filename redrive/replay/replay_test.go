package replay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// script is a provider that plays answers in order.
type script struct {
	mu      sync.Mutex
	answers [][]transcript.Block
	reqs    []*provider.Request
}

func (s *script) Name() string         { return "fake" }
func (s *script) DefaultModel() string { return "fake-1" }
func (s *script) Complete(_ context.Context, req *provider.Request) (*provider.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if len(s.reqs) > len(s.answers) {
		return nil, errors.New("script exhausted")
	}
	content := s.answers[len(s.reqs)-1]
	stop := provider.StopEndTurn
	for _, b := range content {
		if b.Type == transcript.BlockToolUse {
			stop = provider.StopToolUse
		}
	}
	return &provider.Response{Content: content, StopReason: stop, Usage: transcript.Usage{InputTokens: 1, OutputTokens: 1}}, nil
}

// counted is a tool that counts real executions.
type counted struct {
	name string
	runs *atomic.Int64
}

func (c counted) Spec() tool.Spec {
	return tool.Spec{Name: c.name, Description: "live " + c.name, InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (c counted) Capabilities() tool.Capabilities { return tool.Capabilities{ModifiesWorkspace: true} }
func (c counted) Run(context.Context, json.RawMessage) (tool.Result, error) {
	c.runs.Add(1)
	return tool.Result{Content: "LIVE " + c.name}, nil
}

// recording is a session of two turns: fs_read then fs_write, then a second
// turn with one fs_read.
func recording() *session.Session {
	cfg := &transcript.Config{Provider: "fake", Model: "old-model", Tools: []string{"fs_read", "fs_write"}, MaxTurns: 10}
	return &session.Session{Meta: transcript.Meta{ID: "20260805T091500-3f2a1b7c"}, Records: []transcript.Record{
		cfg,
		msg("user", text("do it")),
		msg("assistant", use("a", "fs_read", `{"path":"x"}`), use("b", "fs_write", `{"path":"out","content":"1"}`)),
		msg("user", transcript.ToolResultBlock("b", "wrote 1 byte", false), result("a", "recorded x")),
		msg("assistant", text("done")),
		cfg,
		msg("user", text("again")),
		msg("assistant", use("c", "fs_read", `{"path":"y"}`)),
		msg("user", result("c", "recorded y")),
		msg("assistant", text("done again")),
	}}
}

// only answers every provider and model with one client.
func only(p provider.Provider) ProviderFunc {
	return func(string, string) (provider.Provider, error) { return p, nil }
}

type fixture struct {
	prov *script
	runs *atomic.Int64
	recs []transcript.Record
}

func (f *fixture) tools(names ...string) ToolsFunc {
	return func(rc transcript.Config) (*tool.Registry, *tool.Tracker, error) {
		reg := &tool.Registry{}
		for _, n := range names {
			reg.Register(counted{n, f.runs})
		}
		if len(rc.Tools) > 0 {
			r, err := reg.Restrict(rc.Tools)
			return r, &tool.Tracker{}, err
		}
		return reg, &tool.Tracker{}, nil
	}
}

func (f *fixture) Append(recs ...transcript.Record) error {
	f.recs = append(f.recs, recs...)
	return nil
}
func (f *fixture) Sync() error { return nil }

func run(t *testing.T, mode Mode, answers ...[]transcript.Block) (*Report, *fixture, error) {
	t.Helper()
	f := &fixture{prov: &script{answers: answers}, runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{
		Session: recording(), Providers: only(f.prov), Override: Override{Model: "new-model"}, Mode: mode,
		Tools: f.tools("fs_read", "fs_write"), Recorder: f,
	})
	return rep, f, err
}

func blocks(b ...transcript.Block) []transcript.Block { return b }

func describe(ds []Divergence) string {
	var s []string
	for _, d := range ds {
		s = append(s, fmt.Sprintf("%s@%d/t%d/%v", d.Kind, d.Index, d.Turn, d.Structural))
	}
	return strings.Join(s, " ")
}

func TestReplayClean(t *testing.T) {
	t.Parallel()
	rep, f, err := run(t, ModeStop,
		blocks(use("x1", "fs_read", `{"path":"x"}`), use("x2", "fs_write", `{"content":"1","path":"out"}`)),
		blocks(text("done")),
		blocks(use("x3", "fs_read", `{"path":"y"}`)),
		blocks(text("done again")),
	)
	if err != nil || rep.Status != StatusClean || rep.CallsExpected != 3 || rep.CallsReplayed != 3 || f.runs.Load() != 0 {
		t.Fatalf("%+v, %v, runs %d", rep, err, f.runs.Load())
	}
	// The model got the recorded results, matched by id, and today's spec.
	second := f.prov.reqs[1]
	results := second.Messages[len(second.Messages)-1].Content
	if results[0].ToolUseID != "x1" || results[0].Content != "recorded x" || results[1].Content != "wrote 1 byte" {
		t.Errorf("results sent = %+v", results)
	}
	if second.Tools[0].Description != "live fs_read" || second.Model != "new-model" {
		t.Errorf("request = %+v", second)
	}
	// The second turn starts from the replay's own conversation.
	third := f.prov.reqs[2]
	if len(third.Messages) != 5 || third.Messages[4].Content[0].Text != "again" {
		t.Errorf("second turn history = %+v", third.Messages)
	}
	// Each turn records its config, under the replay's provider and model.
	configs := 0
	for _, r := range f.recs {
		if c, ok := r.(*transcript.Config); ok {
			configs++
			if c.Model != "new-model" || c.MaxTurns != 10 {
				t.Errorf("config = %+v", c)
			}
		}
	}
	if configs != 2 {
		t.Errorf("%d config records", configs)
	}
}

func TestReplayDivergences(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mode    Mode
		answers [][]transcript.Block
		want    string
		runs    int64
		status  string
	}{
		{"another tool stops", ModeStop, [][]transcript.Block{
			blocks(use("1", "fs_write", `{"path":"x"}`)), blocks(text("never"))},
			"tool@0/t1/true", 0, StatusDiverged},
		{"arguments do not stop", ModeStop, [][]transcript.Block{
			blocks(use("1", "fs_read", `{"path":"./x"}`), use("2", "fs_write", `{"path":"out","content":"1"}`)),
			blocks(text("done")), blocks(use("3", "fs_read", `{"path":"y"}`)), blocks(text("ok"))},
			"arguments@0/t1/false", 0, StatusDiverged},
		{"one call more stops", ModeError, [][]transcript.Block{
			blocks(use("1", "fs_read", `{"path":"x"}`), use("2", "fs_write", `{"path":"out","content":"1"}`)),
			blocks(use("3", "fs_write", `{"path":"extra"}`)), blocks(text("never"))},
			"extra@2/t1/true", 0, StatusDiverged},
		{"one call fewer", ModeStop, [][]transcript.Block{
			blocks(use("1", "fs_read", `{"path":"x"}`)), blocks(text("done early"))},
			"missing@1/t1/true", 0, StatusDiverged},
		{"live goes on against the real tools", ModeLive, [][]transcript.Block{
			blocks(use("1", "fs_write", `{"path":"x"}`), use("2", "fs_read", `{"path":"x"}`)),
			blocks(text("done")), blocks(use("3", "fs_read", `{"path":"y"}`)), blocks(text("ok"))},
			"tool@0/t1/true", 3, StatusDiverged},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep, f, err := run(t, tt.mode, tt.answers...)
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(rep.Divergences); got != tt.want || rep.Status != tt.status {
				t.Errorf("divergences %q (%s), want %q", got, rep.Status, tt.want)
			}
			if f.runs.Load() != tt.runs {
				t.Errorf("%d real executions, want %d", f.runs.Load(), tt.runs)
			}
		})
	}
}

func TestReplayLiveAfterDivergenceSendsRealResults(t *testing.T) {
	t.Parallel()
	rep, f, err := run(t, ModeLive,
		blocks(use("1", "fs_read", `{"path":"x"}`), use("2", "fs_read", `{"path":"z"}`)),
		blocks(text("done")), blocks(text("no calls this time")),
	)
	if err != nil {
		t.Fatal(err)
	}
	results := f.prov.reqs[1].Messages[2].Content
	if results[0].Content != "recorded x" || results[1].Content != "LIVE fs_read" {
		t.Errorf("results = %+v", results)
	}
	// Once the recording is abandoned, nothing more is compared.
	if got := describe(rep.Divergences); got != "tool@1/t1/true" || rep.CallsRun != 1 || rep.CallsReplayed != 1 {
		t.Errorf("%s, %+v", got, rep)
	}
	// Both sequences are in the report, the call run for real marked.
	if got := steps(rep.Replayed); got != `1 fs_read {"path":"x"}, 1 fs_read {"path":"z"} live` {
		t.Errorf("replayed %s", got)
	}
	if got := steps(rep.Recorded); !strings.HasPrefix(got, `1 fs_read {"path":"x"}, 1 `) {
		t.Errorf("recorded %s", got)
	}
}

func steps(ss []Step) string {
	var out []string
	for i, s := range ss {
		w := fmt.Sprintf("%d %s %s", s.Turn, s.Name, s.Input)
		if s.Live {
			w += " live"
		}
		if s.Index != i {
			w += fmt.Sprintf(" at %d", s.Index)
		}
		out = append(out, w)
	}
	return strings.Join(out, ", ")
}

func TestReplayRefusals(t *testing.T) {
	t.Parallel()
	f := &fixture{prov: &script{}, runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{Session: recording(), Providers: only(f.prov), Mode: ModeStop, Tools: f.tools("fs_read")})
	var ref *refusal
	if !errors.As(err, &ref) || rep.Status != StatusRefused || !strings.Contains(rep.Reason, `"fs_write"`) {
		t.Errorf("missing tool: %+v, %v", rep, err)
	}
	noConfig := &session.Session{Records: []transcript.Record{msg("user", text("x"))}}
	rep, err = Replay(context.Background(), Options{Session: noConfig, Providers: only(f.prov), Tools: f.tools("fs_read")})
	if !errors.Is(err, ErrNoConfig) || rep.Status != StatusRefused {
		t.Errorf("no config: %+v, %v", rep, err)
	}
	if len(f.prov.reqs) != 0 || len(f.recs) != 0 {
		t.Error("a refused replay called the model or recorded something")
	}
}

func TestParseMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Mode{"": ModeStop, "stop": ModeStop, "error": ModeError, "live": ModeLive} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseMode("maybe"); err == nil {
		t.Error("ParseMode accepted maybe")
	}
}

// A call a resume answered with a made-up "outcome unknown" result has no
// recorded result: the replay says so to the model, runs nothing, and does
// not pass the made-up text off as what the tool returned.
func TestReplayCallWithUnknownOutcome(t *testing.T) {
	t.Parallel()
	cfg := &transcript.Config{Provider: "fake", Model: "m", Tools: []string{"fs_write"}, MaxTurns: 10}
	s := &session.Session{Meta: transcript.Meta{ID: "20260805T091500-3f2a1b7c"}, Records: []transcript.Record{
		cfg,
		msg("user", text("do it")),
		msg("assistant", use("a", "fs_write", `{"path":"out","content":"1"}`)),
		// killed here; the resume answered the call
		cfg,
		msg("user", transcript.UnknownOutcomeBlock("a", "outcome unknown: made up by the resume")),
		msg("user", text("go on")),
		msg("assistant", text("done")),
	}}
	f := &fixture{prov: &script{answers: [][]transcript.Block{
		blocks(use("x1", "fs_write", `{"path":"out","content":"1"}`)),
		blocks(text("done")),
		blocks(text("done")),
	}}, runs: &atomic.Int64{}}
	rep, err := Replay(context.Background(), Options{
		Session: s, Providers: only(f.prov), Mode: ModeStop, Tools: f.tools("fs_write"), Recorder: f,
	})
	if err != nil || f.runs.Load() != 0 {
		t.Fatalf("%+v, %v, runs %d", rep, err, f.runs.Load())
	}
	second := f.prov.reqs[1]
	got := second.Messages[len(second.Messages)-1].Content[0]
	if got.ToolUseID != "x1" || !got.IsError || got.Content != NoRecordedResult {
		t.Errorf("result sent for the unrecorded call = %+v", got)
	}
}

// TestReplayStartsPrivateWithPrivateLearnedRules: a recorded prompt that
// holds a learned rule marked private makes the replay start private, as
// the run did; the control, the same rule unmarked, starts clean.
func TestReplayStartsPrivateWithPrivateLearnedRules(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		mark string
		want bool
	}{{"<!-- mecha: private; from: R -->", true}, {"<!-- mecha: from: R -->", false}} {
		prompt := "be careful\n- Read first. " + c.mark
		cfg := &transcript.Config{Provider: "fake", Model: "m", Tools: []string{"fs_read"}, MaxTurns: 5, SystemPrompt: &prompt}
		s := &session.Session{Meta: transcript.Meta{ID: "20260805T091500-3f2a1b7c"}, Records: []transcript.Record{
			cfg, msg("user", text("do it")), msg("assistant", text("done")),
		}}
		f := &fixture{prov: &script{answers: [][]transcript.Block{blocks(text("done"))}}, runs: &atomic.Int64{}}
		if _, err := Replay(context.Background(), Options{Session: s, Providers: only(f.prov), Mode: ModeLive,
			Tools: f.tools("fs_read"), Recorder: f}); err != nil {
			t.Fatal(err)
		}
		var got transcript.Taint
		for _, r := range f.recs {
			if tt, ok := r.(*transcript.Taint); ok {
				got = got.Merge(*tt)
			}
		}
		if got.Private != c.want {
			t.Errorf("%s: replay taint %+v, want private %v", c.mark, got, c.want)
		}
	}
}

// TestReplayCost: a replay's cost is its usage at today's price of each
// turn's model, and null when one that answered has none.
func TestReplayCost(t *testing.T) {
	t.Parallel()
	answers := [][]transcript.Block{
		blocks(use("a", "fs_read", `{"path":"x"}`), use("b", "fs_write", `{"path":"out","content":"1"}`)), blocks(text("done")),
		blocks(use("c", "fs_read", `{"path":"y"}`)), blocks(text("done again")),
	}
	for _, tc := range []struct {
		name   string
		prices pricing.Table
		want   *float64
	}{
		{"priced", pricing.Table{"fake": {"new-model": {Input: 1, Output: 2}}}, ptr((4*1.0 + 4*2.0) / 1e6)},
		{"unpriced", pricing.Table{"fake": {"other": {Input: 1}}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fixture{prov: &script{answers: answers}, runs: &atomic.Int64{}}
			rep, err := Replay(context.Background(), Options{
				Session: recording(), Providers: only(f.prov), Override: Override{Model: "new-model"}, Mode: ModeStop,
				Tools: f.tools("fs_read", "fs_write"), Prices: tc.prices,
			})
			if err != nil {
				t.Fatal(err)
			}
			if (rep.CostUSD == nil) != (tc.want == nil) || rep.CostUSD != nil && *rep.CostUSD != *tc.want {
				t.Errorf("cost %v, want %v", showCost(rep.CostUSD), showCost(tc.want))
			}
		})
	}
}

func ptr(f float64) *float64 { return &f }

func showCost(f *float64) string {
	if f == nil {
		return "null"
	}
	return fmt.Sprint(*f)
}
