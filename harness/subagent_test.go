package harness

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/subagent"
	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

// steps is a provider answering with the next response.
type steps struct {
	mu   sync.Mutex
	next []*provider.Response
	reqs []*provider.Request
}

func (s *steps) Name() string         { return "test" }
func (s *steps) DefaultModel() string { return "m" }
func (s *steps) Complete(_ context.Context, req *provider.Request) (*provider.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, req)
	if len(s.next) == 0 {
		return nil, errors.New("no step left")
	}
	r := s.next[0]
	s.next = s.next[1:]
	return r, nil
}

func TestTheAgentToolIsOfferedOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var wss Workspaces
	defer wss.Close()
	rc := transcript.Config{Workspace: dir, PermissionMode: string(tool.ModeYes), WorkspaceTrust: &transcript.WorkspaceTrust{Trusted: true, By: transcript.TrustByConfig}}
	sub := &subagent.Setup{Provider: func() (provider.Provider, error) { return &steps{}, nil }}
	build := func(setup ToolSetup) []string {
		t.Helper()
		reg, _, err := BuildTools(&World{}, &wss, rc, setup)
		if err != nil {
			t.Fatal(err)
		}
		return reg.Names()
	}
	if names := build(ToolSetup{Subagent: sub}); slices.Contains(names, subagent.Name) {
		t.Errorf("offered without being asked: %v", names)
	}
	if names := build(ToolSetup{Subagent: sub, Subagents: true}); names[len(names)-1] != subagent.Name || len(names) < 3 {
		t.Errorf("subagents = true: %v, want every tool then agent", names)
	}
	if names := build(ToolSetup{Subagent: sub, Subagents: true, Only: []string{"fs_read"}}); !slices.Equal(names, []string{"fs_read"}) {
		t.Errorf("--tool fs_read with subagents = true: %v", names)
	}
	reg, _, err := BuildTools(&World{}, &wss, rc, ToolSetup{Subagent: sub, Only: []string{"agent", "fs_read"}})
	if err != nil || !slices.Equal(reg.Names(), []string{"fs_read", "agent"}) {
		t.Fatalf("--tool agent --tool fs_read: %v, %v", reg.Names(), err)
	}
	at, _ := reg.Get(subagent.Name)
	if got, want := at.Capabilities(), (tool.Capabilities{ReadsWorkspace: true}); got != want {
		t.Errorf("agent's capabilities %+v, want fs_read's %+v", got, want)
	}
	var usage *UsageError
	if _, _, err := BuildTools(&World{}, &wss, rc, ToolSetup{Only: []string{"agent"}}); !errors.As(err, &usage) {
		t.Errorf("agent named with no way to run a child: %v, want a usage error", err)
	}
}

// TestAChildsToolsAreDecoratedAsTheParents reads a canary through a child
// of the agent tool BuildTools builds: redacted, as in the parent.
func TestAChildsToolsAreDecoratedAsTheParents(t *testing.T) {
	t.Parallel()
	dir := leakyWorkspace(t)
	var wss Workspaces
	defer wss.Close()
	prov := &steps{next: []*provider.Response{
		{Content: []transcript.Block{transcript.ToolUseBlock("c1", "fs_read", json.RawMessage(`{"path":"key.txt"}`))}},
		{Content: []transcript.Block{transcript.TextBlock("read")}},
	}}
	sub := &subagent.Setup{Provider: func() (provider.Provider, error) { return prov, nil }}
	rc := transcript.Config{Workspace: dir, PermissionMode: string(tool.ModeYes), MaxTurns: 5}
	reg, tracker, err := BuildTools(leakyEnv(), &wss, rc, ToolSetup{Subagent: sub, Only: []string{"fs_read", "agent"}})
	if err != nil {
		t.Fatal(err)
	}
	at, _ := reg.Get(subagent.Name)
	res, err := at.Run(context.Background(), json.RawMessage(`{"task":"read key.txt"}`))
	if err != nil || res.IsError {
		t.Fatalf("%+v, %v", res, err)
	}
	got := prov.reqs[1].Messages[len(prov.reqs[1].Messages)-1].Content[0].Content
	if strings.Contains(got, canaryKey) || !strings.Contains(got, "ANTHROPIC_API_KEY") {
		t.Errorf("the child's fs_read returned %q: want the key redacted by name", got)
	}
	if !tracker.Taint().Private {
		t.Errorf("the parent's taint %+v: want private (the agent call, and the child's read flowing back)", tracker.Taint())
	}
}
