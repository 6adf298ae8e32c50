package harness

import (
	"testing"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/record/transcript"
)

// TestWorkspaceTrust is the rule: trusted only when an entry covers the
// workspace now and the record (if it says) was trusted too.
func TestWorkspaceTrust(t *testing.T) {
	ws := t.TempDir()
	on := &config.Config{TrustedWorkspaces: []string{ws}}
	off := &config.Config{}
	yes := &transcript.WorkspaceTrust{Trusted: true, By: transcript.TrustByConfig}
	no := &transcript.WorkspaceTrust{Trusted: false, By: transcript.TrustByDefault}
	for _, c := range []struct {
		name     string
		cfg      *config.Config
		recorded *transcript.WorkspaceTrust
		asked    bool
		want     transcript.WorkspaceTrust
	}{
		{"new, untrusted", off, nil, false, transcript.WorkspaceTrust{By: "default"}},
		{"new, trusted", on, nil, false, transcript.WorkspaceTrust{Trusted: true, By: "config", Entry: ws}},
		{"asked, trusted", on, nil, true, transcript.WorkspaceTrust{Trusted: true, By: "question", Entry: ws}},
		{"asked, not now", off, nil, true, transcript.WorkspaceTrust{By: "question"}},
		{"recorded untrusted, trusted now", on, no, false, transcript.WorkspaceTrust{By: "recorded", Entry: ws}},
		{"recorded trusted, revoked", off, yes, false, transcript.WorkspaceTrust{By: "default"}},
		{"recorded trusted, trusted", on, yes, false, transcript.WorkspaceTrust{Trusted: true, By: "config", Entry: ws}},
	} {
		if got := WorkspaceTrust(c.cfg, ws, c.recorded, c.asked); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

// TestUntrustedWorkspaceTools: the surface of an untrusted workspace
// (or of a record that does not say) makes a read untrusted as well as
// private, naming why; a trusted one's read is private only (the control).
func TestUntrustedWorkspaceTools(t *testing.T) {
	for _, c := range []struct {
		trust     *transcript.WorkspaceTrust
		untrusted bool
	}{
		{nil, true},
		{&transcript.WorkspaceTrust{By: "default"}, true},
		{&transcript.WorkspaceTrust{Trusted: true, By: "config"}, false},
	} {
		var wss Workspaces
		rc := transcript.Config{Workspace: t.TempDir(), PermissionMode: string(tool.ModeYes), Trifecta: "refuse", Sandbox: "none", WorkspaceTrust: c.trust}
		reg, tr, err := BuildTools(&World{}, &wss, rc, ToolSetup{Config: &config.Config{}})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"fs_read", "fs_list", "fs_grep", "fs_glob", "fs_edit", "shell"} {
			tl, _ := reg.Get(name)
			if got := tl.Capabilities().UntrustedWorkspace; got != c.untrusted {
				t.Errorf("%+v: %s declares UntrustedWorkspace %v", c.trust, name, got)
			}
		}
		fs, _ := reg.Get("fs_list")
		if _, err := fs.Run(t.Context(), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		st := tr.State()
		if !st.Taint.Private || st.Taint.Untrusted != c.untrusted {
			t.Errorf("%+v: after fs_list the taint is %+v", c.trust, st.Taint)
		}
		if c.untrusted && st.UntrustedBy != "fs_list read a workspace that is not trusted (mecha trust trusts it)" {
			t.Errorf("untrusted by %q", st.UntrustedBy)
		}
		wss.Close()
	}
}
