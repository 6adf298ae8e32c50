package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// scripted is a provider that answers each call with the next step.
type scripted struct {
	mu    sync.Mutex
	steps []func(*provider.Request) (*provider.Response, error)
	reqs  []*provider.Request
}

func (s *scripted) Name() string         { return "fake" }
func (s *scripted) DefaultModel() string { return "fake-1" }
func (s *scripted) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cp := *req
	cp.Messages = append([]transcript.Message(nil), req.Messages...)
	s.reqs = append(s.reqs, &cp)
	if len(s.reqs) > len(s.steps) {
		return nil, errors.New("script exhausted")
	}
	return s.steps[len(s.reqs)-1](req)
}

func answer(text string, u transcript.Usage) func(*provider.Request) (*provider.Response, error) {
	return func(*provider.Request) (*provider.Response, error) {
		return &provider.Response{Content: []transcript.Block{transcript.TextBlock(text)}, StopReason: provider.StopEndTurn, Usage: u}, nil
	}
}

func calls(u transcript.Usage, cs ...transcript.Block) func(*provider.Request) (*provider.Response, error) {
	return func(*provider.Request) (*provider.Response, error) {
		return &provider.Response{Content: cs, StopReason: provider.StopToolUse, Usage: u}, nil
	}
}

func use(id, name, input string) transcript.Block {
	return transcript.ToolUseBlock(id, name, json.RawMessage(input))
}

// fakeTool answers with its input after an optional delay.
type fakeTool struct {
	name  string
	caps  tool.Capabilities
	delay time.Duration
	ran   chan struct{}
}

func (f *fakeTool) Spec() tool.Spec {
	return tool.Spec{Name: f.name, Description: "fake", InputSchema: json.RawMessage(`{"type":"object"}`)}
}
func (f *fakeTool) Capabilities() tool.Capabilities { return f.caps }
func (f *fakeTool) Run(ctx context.Context, in json.RawMessage) (tool.Result, error) {
	if f.ran != nil {
		f.ran <- struct{}{}
	}
	select {
	case <-time.After(f.delay):
	case <-ctx.Done():
		return tool.Result{}, ctx.Err()
	}
	return tool.Result{Content: f.name + " got " + string(in)}, nil
}

// memRecorder keeps records in memory and can be told to fail.
type memRecorder struct {
	mu      sync.Mutex
	recs    []transcript.Record
	failAt  int // fail the Append that would hold record number failAt (1-based); 0 never
	syncs   int
	failErr error
}

func (m *memRecorder) Append(recs ...transcript.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failErr != nil {
		return m.failErr
	}
	if m.failAt > 0 && len(m.recs)+len(recs) >= m.failAt {
		m.failErr = errors.New("disk full")
		return m.failErr
	}
	m.recs = append(m.recs, recs...)
	return nil
}

func (m *memRecorder) Sync() error { m.syncs++; return nil }

func (m *memRecorder) kinds() string {
	var k []string
	for _, r := range m.recs {
		s := r.Kind()
		if msg, ok := r.(*transcript.Message); ok {
			s = msg.Role
		}
		k = append(k, s)
	}
	return strings.Join(k, ",")
}

func setup(t *testing.T, p *scripted, cfg transcript.Config, tools ...tool.Tool) (Options, *memRecorder) {
	t.Helper()
	tr := &tool.Tracker{}
	reg := &tool.Registry{}
	for _, tl := range tools {
		if err := reg.Register(tr.Wrap(tl)); err != nil {
			t.Fatal(err)
		}
	}
	rec := &memRecorder{}
	if cfg.Model == "" {
		cfg.Provider, cfg.Model = "fake", "fake-1"
	}
	return Options{Provider: p, Tools: reg, Tracker: tr, Config: cfg, Recorder: rec,
		Now: func() time.Time { return time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC) }}, rec
}

func u(in, out uint64) transcript.Usage { return transcript.Usage{InputTokens: in, OutputTokens: out} }

func TestAnswerWithoutTools(t *testing.T) {
	t.Parallel()
	prompt := "be brief"
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){answer("hello", u(10, 2))}}
	opts, rec := setup(t, p, transcript.Config{SystemPrompt: &prompt, MaxTokens: 100, Seed: ptr(uint64(7))})
	res, err := Run(context.Background(), opts, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "hello" || res.Turns != 1 || res.StopReason != StopEndTurn || res.Usage != u(10, 2) {
		t.Errorf("result = %+v", res)
	}
	if got := rec.kinds(); got != "user,assistant,taint,summary" {
		t.Errorf("records = %s", got)
	}
	req := p.reqs[0]
	if req.System != prompt || req.MaxTokens != 100 || *req.Seed != 7 || req.Model != "fake-1" {
		t.Errorf("request = %+v", req)
	}
	sum := rec.recs[3].(*transcript.Summary)
	if sum.StopReason != StopEndTurn || sum.Turns != 1 || sum.Provider != "fake" || sum.Usage != u(10, 2) {
		t.Errorf("summary = %+v", sum)
	}
}

// An answer whose text the API split into blocks (where citations start
// and end) is one text: the result joins the blocks as they are.
func TestAnswerSplitByCitations(t *testing.T) {
	t.Parallel()
	split := func(*provider.Request) (*provider.Response, error) {
		return &provider.Response{Content: []transcript.Block{transcript.TextBlock("The capital of France is "),
			transcript.TextBlock("Paris"), transcript.TextBlock(".")}, StopReason: provider.StopEndTurn}, nil
	}
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){split}}
	opts, _ := setup(t, p, transcript.Config{})
	res, err := Run(context.Background(), opts, "capital of France?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "The capital of France is Paris." {
		t.Errorf("text %q, want the blocks joined with no line break", res.Text)
	}
}

func TestParallelCallsAnsweredInCallOrder(t *testing.T) {
	t.Parallel()
	slow := &fakeTool{name: "slow", delay: 50 * time.Millisecond, caps: tool.Capabilities{ReadsWorkspace: true}}
	fast := &fakeTool{name: "fast"}
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		calls(u(5, 5), use("c1", "slow", `{"a":1}`), use("c2", "fast", `{}`), use("c3", "nope", `{}`)),
		answer("done", u(20, 1)),
	}}
	opts, rec := setup(t, p, transcript.Config{}, slow, fast)
	res, err := Run(context.Background(), opts, "go")
	if err != nil || res.Turns != 2 || res.Text != "done" {
		t.Fatalf("%+v, %v", res, err)
	}
	results := rec.recs[2].(*transcript.Message).Content
	var ids []string
	for _, b := range results {
		ids = append(ids, b.ToolUseID)
	}
	if !reflect.DeepEqual(ids, []string{"c1", "c2", "c3"}) {
		t.Errorf("result order = %v", ids)
	}
	if results[0].Content != `slow got {"a":1}` || !results[2].IsError || !strings.Contains(results[2].Content, `unknown tool "nope"`) {
		t.Errorf("results = %+v", results)
	}
	// The second request carries the results back.
	if last := p.reqs[1].Messages[2]; last.Role != transcript.RoleUser || len(last.Content) != 3 {
		t.Errorf("second request ends with %+v", last)
	}
	// The turn that made the conversation private is followed by a
	// checkpoint; the run's last one says the same.
	if got := rec.kinds(); got != "user,assistant,user,taint,assistant,taint,summary" {
		t.Fatalf("records = %s", got)
	}
	for _, i := range []int{3, 5} {
		if taint := rec.recs[i].(*transcript.Taint); !taint.Private || taint.Untrusted {
			t.Errorf("taint %d = %+v", i, taint)
		}
	}
}

func TestBudgets(t *testing.T) {
	t.Parallel()
	loop := func() func(*provider.Request) (*provider.Response, error) {
		return calls(u(100, 50), use("c", "t", `{}`))
	}
	price := pricing.Table{"fake": {"fake-1": {Input: 1000, Output: 1000}}} // $1 per 1,000 tokens
	tests := []struct {
		name   string
		cfg    transcript.Config
		prices pricing.Table
		stop   string
		turns  int
		last   string
	}{
		{"max turns", transcript.Config{MaxTurns: 3}, nil, StopMaxTurns, 3, "user"},
		{"max output tokens", transcript.Config{MaxOutputTokens: ptr(uint64(120))}, nil, StopMaxOutputTokens, 3, "user"},
		{"max cost", transcript.Config{MaxCostUSD: ptr(0.3)}, price, StopMaxCost, 2, "user"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){loop(), loop(), loop(), loop(), loop()}}
			opts, rec := setup(t, p, tt.cfg, &fakeTool{name: "t"})
			opts.Prices = tt.prices
			res, err := Run(context.Background(), opts, "go")
			if err != nil || res.StopReason != tt.stop || res.Turns != tt.turns {
				t.Fatalf("%+v, %v", res, err)
			}
			msgs := 0
			for _, r := range rec.recs {
				if m, ok := r.(*transcript.Message); ok {
					msgs++
					if msgs == 2*tt.turns+1 && m.Role != tt.last {
						t.Errorf("last message role %s", m.Role)
					}
				}
			}
			if msgs != 2*tt.turns+1 {
				t.Errorf("%d messages: %s", msgs, rec.kinds())
			}
			if tt.stop != StopMaxTurns {
				last := rec.recs[len(rec.recs)-3].(*transcript.Message).Content[0]
				if !last.IsError || !strings.Contains(last.Content, "not run") {
					t.Errorf("pending call answered with %+v", last)
				}
			}
		})
	}
	opts, _ := setup(t, &scripted{}, transcript.Config{MaxCostUSD: ptr(1.0)})
	if _, err := Run(context.Background(), opts, "go"); !errors.Is(err, ErrCostBudgetUnpriced) || strings.Contains(err.Error(), "--") {
		t.Errorf("max cost without a price: %v", err)
	}
}

func TestProviderErrorIsRecorded(t *testing.T) {
	t.Parallel()
	boom := &provider.Error{Provider: "fake", Status: 500, Message: "exploded"}
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		calls(u(1, 1), use("c", "t", `{}`)),
		func(*provider.Request) (*provider.Response, error) { return nil, boom },
	}}
	opts, rec := setup(t, p, transcript.Config{}, &fakeTool{name: "t"})
	res, err := Run(context.Background(), opts, "go")
	if !errors.Is(err, boom) || res.StopReason != StopError {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := rec.kinds(); got != "user,assistant,user,taint,summary" {
		t.Errorf("records = %s", got)
	}
	if s := rec.recs[4].(*transcript.Summary); s.Error != "fake: HTTP 500: exploded" || s.Turns != 1 {
		t.Errorf("summary = %+v", s)
	}
}

func TestInterruptDuringTool(t *testing.T) {
	t.Parallel()
	ran := make(chan struct{}, 1)
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){calls(u(1, 1), use("c", "t", `{}`))}}
	opts, rec := setup(t, p, transcript.Config{}, &fakeTool{name: "t", delay: time.Hour, ran: ran})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-ran; cancel() }()
	res, err := Run(ctx, opts, "go")
	if !errors.Is(err, context.Canceled) || res.StopReason != StopInterrupted {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := rec.kinds(); got != "user,assistant,user,taint,summary" {
		t.Errorf("records = %s", got)
	}
	if r := rec.recs[2].(*transcript.Message).Content[0]; !r.IsError || !strings.HasPrefix(r.Content, "interrupted") {
		t.Errorf("result = %+v", r)
	}
}

func TestRecordingFailureEndsTheRun(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){calls(u(1, 1), use("c", "t", `{}`)), answer("x", u(1, 1))}}
	opts, rec := setup(t, p, transcript.Config{}, &fakeTool{name: "t"})
	rec.failAt = 2
	_, err := Run(context.Background(), opts, "go")
	if err == nil || !strings.Contains(err.Error(), "recording failed: disk full") {
		t.Fatalf("err = %v", err)
	}
	if len(p.reqs) != 1 {
		t.Errorf("the run went on after recording failed: %d requests", len(p.reqs))
	}
}

func TestResumeRepairsDanglingCalls(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){answer("ok", u(1, 1))}}
	opts, rec := setup(t, p, transcript.Config{})
	opts.History = History{Count: 2, Taint: transcript.Taint{Untrusted: true}, Messages: []transcript.Message{
		{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("first")}},
		{Role: transcript.RoleAssistant, Content: []transcript.Block{use("c9", "t", `{}`)}},
	}}
	if _, err := Run(context.Background(), opts, "again"); err != nil {
		t.Fatal(err)
	}
	sent := p.reqs[0].Messages
	if len(sent) != 3 || sent[2].Content[0].ToolUseID != "c9" || !sent[2].Content[0].IsError || sent[2].Content[1].Text != "again" {
		t.Fatalf("sent = %+v", sent)
	}
	if got := rec.kinds(); got != "user,user,assistant,taint,summary" {
		t.Errorf("records = %s", got)
	}
	// The call may have run before the earlier run died: neither the
	// record nor the model may be told it did not.
	for _, b := range []transcript.Block{rec.recs[0].(*transcript.Message).Content[0], sent[2].Content[0]} {
		if !b.OutcomeUnknown || !b.IsError || b.Content != UnknownOutcome || strings.Contains(b.Content, "not run") {
			t.Errorf("dangling call answered with %+v", b)
		}
	}
	if tt := rec.recs[3].(*transcript.Taint); !tt.Untrusted {
		t.Errorf("restored taint lost: %+v", tt)
	}
}

func TestCompactionIsRecordedAndRebuilt(t *testing.T) {
	t.Parallel()
	big := u(900, 100) // context of 1,000 tokens after each call
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		calls(u(400, 100), use("c1", "t", `{"n":1}`)),
		calls(big, use("c2", "t", `{"n":2}`)),
		answer("SUMMARY of work", u(50, 10)), // the compaction call
		calls(u(100, 10), use("c3", "t", `{"n":3}`)),
		answer("finished", u(100, 10)),
	}}
	opts, rec := setup(t, p, transcript.Config{CompactAtTokens: ptr(uint64(1000)), CompactKeepRecent: 2}, &fakeTool{name: "t"})
	res, err := Run(context.Background(), opts, "task")
	if err != nil || res.Text != "finished" {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := rec.kinds(); got != "user,assistant,user,assistant,user,compaction,assistant,user,assistant,taint,summary" {
		t.Fatalf("records = %s", got)
	}
	comp := rec.recs[5].(*transcript.Compaction)
	if comp.Replaces != 3 || comp.Summary != "SUMMARY of work" || comp.Usage != u(50, 10) {
		t.Errorf("compaction = %+v", comp)
	}
	summarise := p.reqs[2].Messages
	if n := len(summarise); n != 3 || !strings.Contains(transcript.TextOf(summarise[n-1].Content), "summary") {
		t.Errorf("compaction request = %+v", summarise)
	}
	after := p.reqs[3].Messages
	if !strings.HasPrefix(after[0].Content[0].Text, session.CompactedPrefix+"SUMMARY") || after[1].Role != transcript.RoleAssistant || after[1].Content[0].ID != "c2" {
		t.Errorf("request after compaction = %+v", after)
	}
	// What a resume rebuilds from the records is what the model last saw.
	s := &session.Session{Records: rec.recs}
	rebuilt := s.Context()
	lastSent := append(p.reqs[4].Messages, *rec.recs[8].(*transcript.Message))
	if !reflect.DeepEqual(stripAt(rebuilt), stripAt(lastSent)) {
		t.Errorf("rebuilt context differs:\n%+v\n%+v", rebuilt, lastSent)
	}
	if res.Usage.InputTokens != 400+900+50+100+100 {
		t.Errorf("usage = %+v", res.Usage)
	}
}

func stripAt(ms []transcript.Message) []transcript.Message {
	out := make([]transcript.Message, len(ms))
	for i, m := range ms {
		out[i] = transcript.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

func TestNormalize(t *testing.T) {
	t.Parallel()
	tb := transcript.TextBlock
	in := []transcript.Message{
		{Role: "user", Content: []transcript.Block{tb("a")}},
		{Role: "assistant"},
		{Role: "user", Content: []transcript.Block{tb("b"), transcript.ToolResultBlock("x", "r", false)}},
		{Role: "assistant", Content: []transcript.Block{tb("c")}},
	}
	got := normalize(in)
	if len(got) != 2 || fmt.Sprintf("%s %s %s", got[0].Content[0].Type, got[0].Content[1].Text, got[0].Content[2].Text) != "tool_result a b" {
		t.Errorf("normalize = %+v", got)
	}
	if in[0].Content[0].Text != "a" || len(in[0].Content) != 1 {
		t.Error("normalize changed its input")
	}
}

func ptr[T any](v T) *T { return &v }

// halfDispatcher answers even-numbered calls itself, runs the others for
// real, and stops the run when it sees a call named "halt".
type halfDispatcher struct{ seen []string }

func (d *halfDispatcher) Dispatch(ctx context.Context, calls []transcript.Block, run RunFunc) ([]tool.Result, string) {
	out := make([]tool.Result, len(calls))
	var live []transcript.Block
	var at []int
	stop := ""
	for i, c := range calls {
		d.seen = append(d.seen, c.ID)
		switch {
		case c.Name == "halt":
			out[i] = tool.Result{Content: "stopped here", IsError: true}
			stop = "diverged"
		case i%2 == 0:
			out[i] = tool.Result{Content: "from the recording"}
		default:
			live, at = append(live, c), append(at, i)
		}
	}
	for j, r := range run(ctx, live) {
		out[at[j]] = r
	}
	return out, stop
}

func TestDispatcher(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		calls(u(1, 1), use("a", "t", `{"n":0}`), use("b", "t", `{"n":1}`), use("c", "nope", `{}`)),
		calls(u(1, 1), use("d", "halt", `{}`)),
		answer("never reached", u(1, 1)),
	}}
	d := &halfDispatcher{}
	opts, rec := setup(t, p, transcript.Config{}, &fakeTool{name: "t"})
	opts.Dispatcher = d
	res, err := Run(context.Background(), opts, "go")
	if err != nil || res.StopReason != "diverged" || res.Turns != 2 {
		t.Fatalf("%+v, %v", res, err)
	}
	if !reflect.DeepEqual(d.seen, []string{"a", "b", "c", "d"}) {
		t.Errorf("dispatched %v", d.seen)
	}
	first := rec.recs[2].(*transcript.Message).Content
	if first[0].Content != "from the recording" || first[1].Content != `t got {"n":1}` || first[2].Content != "from the recording" {
		t.Errorf("results = %+v", first)
	}
	if last := rec.recs[4].(*transcript.Message).Content[0]; last.Content != "stopped here" || last.ToolUseID != "d" {
		t.Errorf("halt result = %+v", last)
	}
	if s := rec.recs[len(rec.recs)-1].(*transcript.Summary); s.StopReason != "diverged" {
		t.Errorf("summary = %+v", s)
	}
}

// TestSkippedPartsNoted: content parts a client received and did not keep
// are said on the log, counted by type, never dropped unsaid.
func TestSkippedPartsNoted(t *testing.T) {
	t.Parallel()
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		func(*provider.Request) (*provider.Response, error) {
			return &provider.Response{Content: []transcript.Block{transcript.TextBlock("ok")}, StopReason: provider.StopEndTurn,
				Skipped: map[string]int{"reference": 2, "image_url": 1}}, nil
		},
	}}
	opts, _ := setup(t, p, transcript.Config{MaxTurns: 3})
	var log strings.Builder
	opts.Log = &log
	if _, err := Run(context.Background(), opts, "go"); err != nil {
		t.Fatal(err)
	}
	if want := "note: the answer held content parts that carry no text and are not recorded: 1 \"image_url\", 2 \"reference\"\n"; !strings.Contains(log.String(), want) {
		t.Fatalf("log %q, want %q in it", log.String(), want)
	}
}
