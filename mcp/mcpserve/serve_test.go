package mcpserve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/mcp/mcpserve"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// lockedBuffer is a stderr that several goroutines may write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// serve connects a go-sdk client to mecha's built-in tools over in-memory
// transports, gated by mode, recording into dir.
func serve(t *testing.T, dir string, mode tool.Mode) (*mcp.ClientSession, *mcpserve.Recorder, *lockedBuffer, string) {
	t.Helper()
	wsDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(wsDir, "a.txt"), []byte("hello\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws, err := builtin.NewWorkspace(wsDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	reg := &tool.Registry{}
	for _, tl := range builtin.All(ws, builtin.Options{}) {
		if err := reg.Register(tool.Gate(tl, mode, nil)); err != nil {
			t.Fatal(err)
		}
	}
	warn := &lockedBuffer{}
	rec := &mcpserve.Recorder{
		Store:  &session.Store{Dir: dir},
		Meta:   transcript.Meta{Provider: "mcp", Workspace: wsDir, Title: "mcp serve"},
		Config: &transcript.Config{Provider: "mcp", Workspace: wsDir, Tools: reg.Names(), PermissionMode: string(mode), ToolSpecs: reg.TranscriptSpecs()},
		Warn:   warn,
	}
	ids := &mcpserve.IDs{}
	s := mcpserve.NewServer(mcpserve.Implementation("test"), reg, nil)
	s.AddReceivingMiddleware(mcpserve.Middleware(rec, ids, nil))
	st, ct := mcp.NewInMemoryTransports()
	ss, err := s.Connect(context.Background(), ids.WatchTransport(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	c := mcp.NewClient(&mcp.Implementation{Name: "tester", Version: "9.9"}, nil)
	cs, err := c.Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, rec, warn, wsDir
}

func text(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func TestServeRecordsEveryCall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cs, rec, warn, wsDir := serve(t, dir, tool.ModeReadOnly)
	ctx := context.Background()

	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range lt.Tools {
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, ","); got != "fs_edit,fs_glob,fs_grep,fs_list,fs_read,fs_write,shell,web_fetch" { // the SDK lists by name
		t.Fatalf("tools = %s", got)
	}

	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_read", Arguments: json.RawMessage(`{"path": "a.txt"}`)})
	if err != nil || r.IsError || !strings.Contains(text(r), "hello") {
		t.Fatalf("fs_read: %v %+v", err, r)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_write", Arguments: map[string]any{"path": "b.txt", "content": "x"}})
	if err != nil || !r.IsError || text(r) != "denied: fs_write modifies the workspace and the run is in read-only mode" {
		t.Fatalf("fs_write: %v %q", err, text(r))
	}
	if _, err := os.Stat(filepath.Join(wsDir, "b.txt")); !os.IsNotExist(err) {
		t.Fatalf("a denied write wrote: %v", err)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fs_read", Arguments: map[string]any{"path": "../etc/passwd"}})
	if err != nil || !r.IsError {
		t.Fatalf("a read outside the workspace: %v %+v", err, r)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "nope", Arguments: map[string]any{}}); err == nil {
		t.Fatal("an unknown tool was called")
	}
	cs.Close()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	if warn.String() != "" {
		t.Fatalf("stderr: %s", warn.String())
	}

	l, err := rec.Store.Load(session.Ref{Dir: dir, ID: rec.ID()})
	if err != nil {
		t.Fatal(err)
	}
	m := l.Meta
	if m.MCPClient == nil || m.MCPClient.Name != "tester" || m.MCPClient.Version != "9.9" || m.MCPClient.ProtocolVersion == "" {
		t.Fatalf("meta client = %+v", m.MCPClient)
	}
	cfg := l.Records[0].(*transcript.Config)
	if cfg.PermissionMode != "read-only" || len(cfg.Tools) != 8 || cfg.Workspace != wsDir {
		t.Fatalf("config = %+v", cfg)
	}
	var calls []*transcript.ToolCall
	for _, r := range l.Records {
		if c, ok := r.(*transcript.ToolCall); ok {
			calls = append(calls, c)
		}
	}
	if len(calls) != 4 {
		t.Fatalf("%d tool_call records, want 4", len(calls))
	}
	// Ids 1 and 2 went to server/discover and tools/list.
	want := []struct {
		id, tool, args, content string
		isErr                   bool
		hasErr                  bool
	}{
		{"3", "fs_read", `{"path":"a.txt"}`, "hello", false, false},
		{"4", "fs_write", `{"content":"x","path":"b.txt"}`, "denied: fs_write modifies the workspace and the run is in read-only mode", true, false},
		{"5", "fs_read", `{"path":"../etc/passwd"}`, "", true, false},
		{"6", "nope", `{}`, "", false, true},
	}
	for i, w := range want {
		c := calls[i]
		if string(c.ID) != w.id || c.Tool != w.tool || string(c.Arguments) != w.args || c.IsError != w.isErr || (c.Error != "") != w.hasErr {
			t.Errorf("call %d = id %s tool %s args %s is_error %v error %q", i, c.ID, c.Tool, c.Arguments, c.IsError, c.Error)
		}
		if !strings.Contains(string(c.Content), w.content) || c.StartedAt.IsZero() || c.DurationMS < 0 {
			t.Errorf("call %d content %s started %v took %v", i, c.Content, c.StartedAt, c.DurationMS)
		}
	}
	if s, ok := l.Records[len(l.Records)-1].(*transcript.Summary); !ok || s.StopReason != "closed" || s.SessionTurns == nil || *s.SessionTurns != 0 {
		t.Errorf("last record %#v", l.Records[len(l.Records)-1])
	}
}

// TestServeRecordingFailure: a session that cannot be written costs one
// line on stderr, never a call.
func TestServeRecordingFailure(t *testing.T) {
	t.Parallel()
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, rec, warn, _ := serve(t, filepath.Join(notDir, "sessions"), tool.ModeYes)
	for range 3 {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fs_read", Arguments: map[string]any{"path": "a.txt"}})
		if err != nil || r.IsError {
			t.Fatalf("a call failed with recording: %v %+v", err, r)
		}
	}
	if rec.Err() == nil {
		t.Fatal("no recording error")
	}
	if n := strings.Count(warn.String(), "mecha: recording stopped"); n != 1 {
		t.Fatalf("stderr said it %d times:\n%s", n, warn.String())
	}
}
