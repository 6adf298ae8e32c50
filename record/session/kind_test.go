package session

import (
	"testing"

	"github.com/mecha-agent/mecha/record/transcript"
)

func TestKind(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		m    transcript.Meta
		want string
	}{
		{transcript.Meta{Provider: "anthropic", Title: "fix the bug"}, KindRun},
		{transcript.Meta{Provider: "mock", Parent: &transcript.ParentCall{Session: "p", CallID: "c"}}, KindRun},
		{transcript.Meta{Provider: "mock", ReplayOf: "x"}, KindReplay},
		{transcript.Meta{Provider: "mock", RerunOf: "x"}, KindRerun},
		{transcript.Meta{Provider: "mock", ReflectsOn: "x"}, KindReflection},
		{transcript.Meta{Provider: "mock", Distill: true}, KindReflection},
		{transcript.Meta{Provider: "mcp", Title: "mcp serve"}, KindServe},
		{transcript.Meta{Provider: "mcp", Title: "mcp proxy"}, KindProxy},
		{transcript.Meta{Provider: "mcp", Title: "mcp proxy: github"}, KindProxy},
		{transcript.Meta{Provider: "mcp", Title: "mcp proxying"}, KindServe},
		{transcript.Meta{Provider: "x", MCPClient: &transcript.MCPPeer{Name: "c"}}, KindServe},
		{transcript.Meta{Provider: "anthropic", Title: "mcp proxy"}, KindRun},
		{transcript.Meta{Provider: "anthropic", ImportedFrom: &transcript.ImportedFrom{Harness: "codex"}}, KindImported},
		// Two marks: the first in Kind's order wins.
		{transcript.Meta{ReplayOf: "x", RerunOf: "y"}, KindReplay},
		{transcript.Meta{ImportedFrom: &transcript.ImportedFrom{}, ReplayOf: "x"}, KindImported},
	} {
		if got := Kind(&tc.m); got != tc.want {
			t.Errorf("Kind(%+v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
