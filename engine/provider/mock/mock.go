package mock

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/record/transcript"
)

const (
	// Name is the provider's name, as given to -p.
	Name = "mock"
	// DefaultModel is the model name reported when the request names none.
	DefaultModel = "mock-1"
)

// Provider is the mock. It is safe for concurrent use; concurrent calls
// take turns in the order they arrive.
type Provider struct {
	script *Script
	mu     sync.Mutex
	calls  int
}

var _ provider.Provider = (*Provider)(nil)

// New returns a mock playing script, or the default behaviour when script
// is nil.
func New(script *Script) *Provider { return &Provider{script: script} }

// Name returns "mock".
func (p *Provider) Name() string { return Name }

// DefaultModel returns DefaultModel.
func (p *Provider) DefaultModel() string { return DefaultModel }

// Calls returns the number of calls made so far.
func (p *Provider) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls
}

// Remaining returns the number of scripted turns not yet played (0 without
// a script).
func (p *Provider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.script == nil {
		return 0
	}
	return max(0, len(p.script.Turns)-p.calls)
}

// Complete plays the next turn of the script, or answers by default.
func (p *Provider) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", Name, err)
	}
	p.mu.Lock()
	p.calls++
	n := p.calls
	p.mu.Unlock()
	var t Turn
	if p.script == nil {
		t = defaultTurn(req)
	} else {
		if n > len(p.script.Turns) {
			return nil, &provider.Error{Provider: Name, Message: fmt.Sprintf("script exhausted: this is model call %d and the script has %d turns", n, len(p.script.Turns))}
		}
		t = p.script.Turns[n-1]
	}
	if e := t.Error; e != nil {
		return nil, &provider.Error{Provider: Name, Status: e.Status, Type: e.Type, Message: e.Message,
			Retryable: e.Retryable, RetryAfter: time.Duration(e.RetryAfterMS) * time.Millisecond}
	}
	return play(t, req), nil
}

// play renders a turn as a response to req.
func play(t Turn, req *provider.Request) *provider.Response {
	resp := &provider.Response{Model: t.Model}
	if resp.Model == "" {
		resp.Model = req.Model
	}
	if resp.Model == "" {
		resp.Model = DefaultModel
	}
	if t.Thinking != "" {
		resp.Content = append(resp.Content, transcript.Block{Type: transcript.BlockThinking, Thinking: t.Thinking, Signature: "mock"})
		if req.OnDelta != nil {
			req.OnDelta(provider.Delta{Kind: "thinking", Text: t.Thinking})
		}
	}
	if t.Text != "" {
		resp.Content = append(resp.Content, transcript.TextBlock(t.Text))
		if req.OnDelta != nil {
			req.OnDelta(provider.Delta{Kind: "text", Text: t.Text})
		}
	}
	next := countToolUses(req.Messages)
	for _, c := range t.ToolCalls {
		next++
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", next)
		}
		resp.Content = append(resp.Content, transcript.ToolUseBlock(id, c.Name, c.InputJSON()))
	}
	resp.StopReason = t.Stop()
	resp.NativeStopReason = resp.StopReason
	resp.Usage = t.UsageFor(requestBytes(req))
	return resp
}

func countToolUses(msgs []transcript.Message) int {
	n := 0
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == transcript.BlockToolUse {
				n++
			}
		}
	}
	return n
}

// requestBytes is the size of what a model would read: the system prompt,
// the tools and the conversation, as JSON.
func requestBytes(req *provider.Request) int {
	n := len(req.System)
	for _, t := range req.Tools {
		n += len(t.Name) + len(t.Description) + len(t.InputSchema)
	}
	for _, m := range req.Messages {
		b, _ := json.Marshal(m.Content)
		n += len(b)
	}
	return n
}
