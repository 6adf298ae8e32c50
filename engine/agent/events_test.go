package agent

import (
	"context"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestEventsAndSteering watches a run through OnEvent and steers it while
// its one call runs: the text typed then rides beside the call's result in
// the same user message, which is what replay calls steering.
func TestEventsAndSteering(t *testing.T) {
	t.Parallel()
	slow := &fakeTool{name: "slow", ran: make(chan struct{}, 1)}
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		func(req *provider.Request) (*provider.Response, error) {
			req.OnDelta(provider.Delta{Kind: "text", Text: "look"})
			return calls(u(5, 5), use("c1", "slow", `{}`))(req)
		},
		answer("done", u(7, 1)),
	}}
	opts, rec := setup(t, p, transcript.Config{}, slow)
	var kinds []string
	opts.OnEvent = func(e Event) {
		k := e.Kind
		switch e.Kind {
		case EventDelta:
			k += ":" + e.Delta.Text
		case EventToolDone:
			k += ":" + e.Result.Content
		case EventMessage:
			k += ":" + e.Message.Role
		}
		kinds = append(kinds, k)
	}
	asked := 0
	opts.Steer = func() []string {
		asked++
		return []string{"", "use the other file"}
	}
	if _, err := Run(context.Background(), opts, "go"); err != nil {
		t.Fatal(err)
	}
	want := "message:user delta:look turn message:assistant tool_start tool_done:slow got {} message:user turn message:assistant"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("events\n got %s\nwant %s", got, want)
	}
	if asked != 1 {
		t.Errorf("Steer asked %d times, want once (one turn had calls)", asked)
	}
	results := rec.recs[2].(*transcript.Message)
	if len(results.Content) != 2 || results.Content[0].Type != transcript.BlockToolResult ||
		results.Content[1].Type != transcript.BlockText || results.Content[1].Text != "use the other file" {
		t.Fatalf("results message = %+v", results.Content)
	}
	// The second request carries the steering beside the result.
	if last := p.reqs[1].Messages[2]; len(last.Content) != 2 || last.Content[1].Text != "use the other file" {
		t.Errorf("second request ends with %+v", last)
	}
}

// TestCompactionDoesNotStream: the summary a compaction asks for is not
// an answer, so a watcher (the terminal's stream, --stream-json) is not
// handed its text as deltas; the control is the answers' deltas, which do
// reach it.
func TestCompactionDoesNotStream(t *testing.T) {
	t.Parallel()
	streaming := func(step func(*provider.Request) (*provider.Response, error), text string) func(*provider.Request) (*provider.Response, error) {
		return func(req *provider.Request) (*provider.Response, error) {
			if req.OnDelta != nil {
				req.OnDelta(provider.Delta{Kind: "text", Text: text})
			}
			return step(req)
		}
	}
	p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
		streaming(calls(u(400, 100), use("c1", "t", `{"n":1}`)), "one"),
		streaming(calls(u(900, 100), use("c2", "t", `{"n":2}`)), "two"),
		streaming(answer("SUMMARY", u(50, 10)), "SUMMARY"), // the compaction call
		streaming(answer("finished", u(100, 10)), "finished"),
	}}
	opts, _ := setup(t, p, transcript.Config{CompactAtTokens: ptr(uint64(1000)), CompactKeepRecent: 2}, &fakeTool{name: "t"})
	var deltas []string
	opts.OnEvent = func(e Event) {
		if e.Kind == EventDelta {
			deltas = append(deltas, e.Delta.Text)
		}
	}
	if res, err := Run(context.Background(), opts, "task"); err != nil || res.Text != "finished" {
		t.Fatalf("%+v, %v", res, err)
	}
	if got := strings.Join(deltas, " "); got != "one two finished" {
		t.Errorf("deltas = %q, want the answers' only", got)
	}
}
