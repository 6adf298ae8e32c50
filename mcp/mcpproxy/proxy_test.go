package mcpproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/mcp/mcpproxy"
	"github.com/mecha-agent/mecha/mcp/mcpserve"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/mcpproxytest"
)

type seen struct {
	mu       sync.Mutex
	progress []string
	logs     []string
}

// client connects a go-sdk client to t, noting progress and log messages.
func client(tb testing.TB, t mcp.Transport, s *seen) *mcp.ClientSession {
	tb.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "tester", Version: "9.9"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			s.mu.Lock()
			s.progress = append(s.progress, r.Params.Message)
			s.mu.Unlock()
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			s.mu.Lock()
			s.logs = append(s.logs, r.Params.Data.(string))
			s.mu.Unlock()
		},
	})
	// The proxy offers the handshake-era versions; pin the direct
	// connection to the same one, so both answer alike.
	cs, err := c.Connect(context.Background(), t, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cs.Close() })
	return cs
}

// direct connects a client straight to a fresh upstream.
func direct(tb testing.TB, s *seen) *mcp.ClientSession {
	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcpproxytest.NewUpstream().Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ss.Close() })
	return client(tb, ct, s)
}

// proxied connects a client to a proxy in front of a fresh upstream,
// recording into dir (nothing when dir is "").
func proxied(tb testing.TB, dir string, s *seen) (*mcp.ClientSession, *mcpserve.Recorder) {
	var rec *mcpserve.Recorder
	if dir != "" {
		rec = &mcpserve.Recorder{Store: &session.Store{Dir: dir}, Meta: transcript.Meta{Provider: "mcp", Title: "mcp proxy"}}
	}
	ids := &mcpserve.IDs{}
	p := mcpproxy.New(mcpproxy.Options{
		Connect: func(context.Context) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			ss, err := mcpproxytest.NewUpstream().Connect(context.Background(), st, nil)
			if err != nil {
				return nil, err
			}
			tb.Cleanup(func() { ss.Close() })
			return ct, nil
		},
		Upstream: transcript.MCPUpstream{Transport: "stdio", Command: "mcpupstream"},
		Config:   transcript.Config{Provider: "mcp", PermissionMode: "yes"},
		Recorder: rec,
		IDs:      ids,
	})
	tb.Cleanup(func() { p.Close() })
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(context.Background(), ids.WatchTransport(p.Transport(st)), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ss.Close() })
	return client(tb, ct, s), rec
}

// exchange runs the same requests against cs and returns their results.
func exchange(t *testing.T, cs *mcp.ClientSession) []any {
	t.Helper()
	ctx := context.Background()
	var out []any
	add := func(v any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(v)
		var m any
		json.Unmarshal(b, &m)
		out = append(out, m)
	}
	ir := cs.InitializeResult()
	add(map[string]any{"serverInfo": ir.ServerInfo, "capabilities": ir.Capabilities, "instructions": ir.Instructions}, nil)
	add(cs.ListTools(ctx, nil))
	add(cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}))
	add(cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}}))
	add(cs.ListResources(ctx, nil))
	add(cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://greeting"}))
	add(cs.ListPrompts(ctx, nil))
	add(cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "greet"}))
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "missing", Arguments: map[string]any{}})
	add(map[string]any{"unknown tool error": err != nil}, nil)
	return out
}

// TestTransparent holds the proxy to what the upstream answers directly.
func TestTransparent(t *testing.T) {
	t.Parallel()
	var s1, s2 seen
	want := exchange(t, direct(t, &s1))
	got := exchange(t, func() *mcp.ClientSession { cs, _ := proxied(t, t.TempDir(), &s2); return cs }())
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("exchange %d through the proxy:\n%v\ndirect:\n%v", i, got[i], want[i])
		}
	}
}

func TestProgressAndLogsPassThrough(t *testing.T) {
	t.Parallel()
	var s seen
	cs, _ := proxied(t, "", &s)
	ctx := context.Background()
	if err := cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"}); err != nil {
		t.Fatal(err)
	}
	p := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "p"}}
	p.SetProgressToken("tok-1")
	if _, err := cs.CallTool(ctx, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		n, m := len(s.progress), len(s.logs)
		s.mu.Unlock()
		if n == 1 && m == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("progress %v, logs %v", s.progress, s.logs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s.progress[0] != "half" || s.logs[0] != "echoing p" {
		t.Fatalf("progress %v, logs %v", s.progress, s.logs)
	}
}

func TestCancellationPassesThrough(t *testing.T) {
	t.Parallel()
	var s seen
	cs, _ := proxied(t, "", &s)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	before := mcpproxytest.Cancelled.Load()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 60000}}); err == nil {
		t.Fatal("a cancelled call succeeded")
	}
	// The upstream's handler saw its context end: the cancellation went
	// through the proxy (polled, bounded: not a measure of speed).
	for deadline := time.Now().Add(30 * time.Second); mcpproxytest.Cancelled.Load() == before; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the cancellation did not reach the upstream")
		}
	}
	// The link still works.
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{"ms": 1}}); err != nil || r.IsError {
		t.Fatalf("after a cancellation: %v %+v", err, r)
	}
}

func TestProxyRecords(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var s seen
	cs, rec := proxied(t, dir, &s)
	ctx := context.Background()
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: json.RawMessage(`{"text":"<a&b>"}`)})
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail", Arguments: map[string]any{}})
	cs.CallTool(ctx, &mcp.CallToolParams{Name: "missing", Arguments: map[string]any{}})
	cs.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := rec.Store.Load(session.Ref{Dir: dir, ID: rec.ID()})
	if err != nil {
		t.Fatal(err)
	}
	if c := l.Meta.MCPClient; c == nil || c.Name != "tester" || c.ProtocolVersion != "2025-11-25" {
		t.Fatalf("client %+v", l.Meta.MCPClient)
	}
	cfg, ok := l.Records[0].(*transcript.Config)
	if !ok || cfg.MCPUpstream == nil {
		t.Fatalf("first record %#v", l.Records[0])
	}
	if u := cfg.MCPUpstream; u.Command != "mcpupstream" || u.Server.Name != mcpproxytest.Name || u.Server.Version != mcpproxytest.Version || u.Server.ProtocolVersion == "" {
		t.Fatalf("upstream %+v", u)
	}
	var calls []*transcript.ToolCall
	arrived := map[int]*transcript.ToolCallStart{}
	for _, r := range l.Records {
		switch c := r.(type) {
		case *transcript.ToolCallStart:
			arrived[c.Call] = c
		case *transcript.ToolCall:
			// Each call was on the record before its answer, under its
			// number, with the same id, tool and arguments.
			if a := arrived[c.Call]; a == nil || c.Call == 0 || string(a.ID) != string(c.ID) || a.Tool != c.Tool ||
				string(a.Arguments) != string(c.Arguments) || !a.StartedAt.Equal(c.StartedAt) {
				t.Errorf("call %d (%s) answered without its arrival on the record before it: %+v", c.Call, c.Tool, a)
			}
			calls = append(calls, c)
		}
	}
	if len(calls) != 3 || len(arrived) != 3 {
		t.Fatalf("%d calls recorded, %d arrivals", len(calls), len(arrived))
	}
	c := calls[0]
	if c.Tool != "echo" || string(c.Arguments) != `{"text":"<a&b>"}` || string(c.Content) != `[{"type":"text","text":"echo: <a&b>"}]` || c.IsError || string(c.ID) == "" || string(c.ID) == "null" {
		t.Errorf("echo: %+v", c)
	}
	if c := calls[1]; c.Tool != "fail" || !c.IsError || string(c.Content) != `[{"type":"text","text":"it failed"}]` {
		t.Errorf("fail: %+v", c)
	}
	if c := calls[2]; c.Tool != "missing" || c.Error == "" || string(c.Content) != "null" && c.Content != nil {
		t.Errorf("missing: %+v (content %s)", c, c.Content)
	}
}

// TestUpstreamGoneEndsTheClientSession: when the upstream goes away, the
// client sees its server go, as it would directly.
func TestUpstreamGoneEndsTheClientSession(t *testing.T) {
	t.Parallel()
	var up *mcp.ServerSession
	ids := &mcpserve.IDs{}
	p := mcpproxy.New(mcpproxy.Options{
		Connect: func(context.Context) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			ss, err := mcpproxytest.NewUpstream().Connect(context.Background(), st, nil)
			up = ss
			return ct, err
		},
		IDs: ids,
	})
	defer p.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	var s seen
	cs := client(t, ct, &s)
	up.Close()
	done := make(chan struct{})
	go func() { cs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the client session outlived its upstream")
	}
}

// TestUpstreamThatCannotStart: the client's initialize fails with the
// reason, and OnError hears it.
func TestUpstreamThatCannotStart(t *testing.T) {
	t.Parallel()
	var heard error
	p := mcpproxy.New(mcpproxy.Options{
		Connect: func(context.Context) (mcp.Transport, error) { return nil, errors.New("no such program") },
		OnError: func(err error) { heard = err },
	})
	defer p.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	if _, err := c.Connect(context.Background(), ct, nil); err == nil || !strings.Contains(err.Error(), "no such program") {
		t.Fatalf("initialize: %v", err)
	}
	if heard == nil || !strings.Contains(heard.Error(), "no such program") {
		t.Fatalf("OnError heard %v", heard)
	}
}
