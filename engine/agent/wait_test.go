package agent

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

// clockAsker answers after the person "thought" for think: the run's
// clock moves on by that much while it is asked, and nowhere else.
type clockAsker struct {
	mu     sync.Mutex
	t      time.Time
	think  time.Duration
	answer tool.Answer
}

func (c *clockAsker) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clockAsker) Confirm(ctx context.Context, req tool.Request) (bool, error) {
	a, err := c.Answer(ctx, req)
	return a.Allow, err
}

func (c *clockAsker) Answer(ctx context.Context, req tool.Request) (tool.Answer, error) {
	c.mu.Lock()
	c.t = c.t.Add(c.think)
	c.mu.Unlock()
	return c.answer, nil
}

// TestCallTimeLeavesOutThePerson: a call that waited 10 s for its answer
// took 0 s by the run's clock (the control: the time the person took is
// on that clock), and a denial's reason reaches the model in the result.
func TestCallTimeLeavesOutThePerson(t *testing.T) {
	for _, allow := range []bool{true, false} {
		ask := &clockAsker{t: time.Date(2026, 8, 5, 9, 0, 0, 0, time.UTC), think: 10 * time.Second,
			answer: tool.Answer{Allow: allow, Reason: "use the Makefile instead"}}
		sh := &fakeTool{name: "shell", caps: tool.Capabilities{RunsCommands: true}}
		reg := &tool.Registry{}
		if err := reg.Register(tool.Policy{Mode: tool.ModeAsk, Trifecta: tool.TrifectaOff, Asker: ask}.Wrap(sh, &tool.Tracker{})); err != nil {
			t.Fatal(err)
		}
		p := &scripted{steps: []func(*provider.Request) (*provider.Response, error){
			calls(u(1, 1), use("c1", "shell", `{"command":"make"}`)), answer("ok", u(1, 1))}}
		var took []time.Duration
		start := ask.now()
		res, err := Run(context.Background(), Options{Provider: p, Tools: reg, Config: transcript.Config{Provider: "fake", Model: "fake-1"},
			Now: ask.now, OnEvent: func(e Event) {
				if e.Kind == EventToolDone {
					took = append(took, e.Took)
				}
			}}, "build")
		if err != nil || res == nil {
			t.Fatal(err)
		}
		if len(took) != 1 || took[0] != 0 {
			t.Errorf("allow %v: the call took %v by the run's clock; want 0 (the 10 s were the person's)", allow, took)
		}
		if passed := ask.now().Sub(start); passed != 10*time.Second {
			t.Errorf("the clock moved %v; want the 10 s of the answer", passed)
		}
		sent := p.reqs[len(p.reqs)-1]
		last := sent.Messages[len(sent.Messages)-1]
		result := last.Content[0].Content
		if !allow && result != "denied by the user. The user said: use the Makefile instead" {
			t.Errorf("the denial sent: %q", result)
		}
		if allow && strings.Contains(result, "Makefile") {
			t.Errorf("an allowed call's result carries the reason: %q", result)
		}
	}
}
