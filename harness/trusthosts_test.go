package harness

import (
	"slices"
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestToolsTrustConfiguredHosts: the tracker BuildTools returns trusts the
// hosts config.toml names for it (trusted_hosts) and the hosts the shell's
// egress allowlist names, and no other: the provenance rule then holds a
// call to any host only untrusted content named.
func TestToolsTrustConfiguredHosts(t *testing.T) {
	t.Parallel()
	var wss Workspaces
	defer wss.Close()
	rc := transcript.Config{Workspace: t.TempDir(), PermissionMode: string(tool.ModeYes),
		WorkspaceTrust: &transcript.WorkspaceTrust{Trusted: true, By: transcript.TrustByConfig},
		TrustedHosts:   []string{"*.corp.example"}, SandboxAllowDomains: []string{"pypi.org", "*.npmjs.org"}}
	_, tracker, err := BuildTools(&World{}, &wss, rc, ToolSetup{Only: []string{"fs_read"}})
	if err != nil {
		t.Fatal(err)
	}
	got := tracker.Untrusted([]string{"pypi.org", "registry.npmjs.org", "wiki.corp.example", "evil.example"})
	if want := []string{"evil.example"}; !slices.Equal(got, want) {
		t.Errorf("untrusted %q, want %q", got, want)
	}
}
