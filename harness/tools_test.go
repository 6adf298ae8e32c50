package harness

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/internal/credential"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/record/transcript"
)

const (
	canaryKey   = "CANARY-anthropic-9f3b2c71"
	canaryToken = "CANARY-service-token-2"
)

// leakyWorkspace is a workspace holding both canaries in a file, as a key
// copied into a project's .env would be.
func leakyWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key.txt"), []byte("ANTHROPIC_API_KEY="+canaryKey+"\nTOKEN="+canaryToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func leakyEnv() *World {
	vars := map[string]string{"ANTHROPIC_API_KEY": canaryKey}
	return &World{
		Getenv: func(k string) string { return vars[k] },
		Environ: func() []string {
			return []string{"PATH=/usr/bin:/bin", "OTHER_SERVICE_TOKEN=" + canaryToken, "HOME=/nowhere"}
		},
	}
}

// TestBuildToolsRedactsSecrets reads the canaries through the tools BuildTools
// builds: they come back redacted, by name.
func TestBuildToolsRedactsSecrets(t *testing.T) {
	t.Parallel()
	dir := leakyWorkspace(t)
	var wss Workspaces
	defer wss.Close()
	reg, _, err := BuildTools(leakyEnv(), &wss, transcript.Config{Workspace: dir, PermissionMode: string(tool.ModeYes)}, ToolSetup{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, input string }{
		{builtin.NameShell, `{"command":"cat key.txt"}`},
		{builtin.NameFSRead, `{"path":"key.txt"}`},
	} {
		tl, _ := reg.Get(c.name)
		res, err := tl.Run(context.Background(), json.RawMessage(c.input))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(res.Content, "CANARY") {
			t.Errorf("%s leaked a canary: %q", c.name, res.Content)
		}
		if !strings.Contains(res.Content, "[redacted ANTHROPIC_API_KEY]") || !strings.Contains(res.Content, "[redacted OTHER_SERVICE_TOKEN]") {
			t.Errorf("%s: %q does not say what was redacted", c.name, res.Content)
		}
	}
}

// TestBuildToolsRedactsSecretsControl is the same read through the shell
// tool without the decorator: the canaries come back, so the test above
// proves the redaction and not a command that failed.
func TestBuildToolsRedactsSecretsControl(t *testing.T) {
	t.Parallel()
	ws, err := builtin.NewWorkspace(leakyWorkspace(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	res, err := builtin.NewShell(ws, builtin.Options{Env: credential.Scrub(leakyEnv().environ())}).Run(context.Background(), json.RawMessage(`{"command":"cat key.txt"}`))
	if err != nil || !strings.Contains(res.Content, canaryKey) || !strings.Contains(res.Content, canaryToken) {
		t.Fatalf("the undecorated shell did not read the canaries: %q, %v", res.Content, err)
	}
}

func TestSecrets(t *testing.T) {
	t.Parallel()
	env := &World{
		Getenv: func(k string) string {
			return map[string]string{"OPENAI_API_KEY": "sk-openai-0123456789"}[k]
		},
		Environ: func() []string {
			return []string{"PATH=/bin", "GITHUB_TOKEN=ghp_0123456789", "db_password=hunter2hunter2", "EMPTY_SECRET=", "EDITOR=visible-value-123",
				"DATABASE_URL=postgres://app:pw-0123456789@db/app", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "NPM_AUTH=npm-auth-0123"}
		},
	}
	var got []string
	for _, s := range Secrets(env) {
		got = append(got, s.Name+"="+s.Value)
	}
	want := "OPENAI_API_KEY=sk-openai-0123456789 GITHUB_TOKEN=ghp_0123456789 db_password=hunter2hunter2 " +
		"DATABASE_URL=app:pw-0123456789 DATABASE_URL=pw-0123456789 NPM_AUTH=npm-auth-0123"
	if strings.Join(got, " ") != want {
		t.Errorf("Secrets = %v\nwant %s", got, want)
	}
}

// TestBuildToolsRecordedNone: a config that recorded an empty tool list (a
// reflection, a distillation) gets no tool when rebuilt, as for a replay;
// one that recorded none at all gets every tool.
func TestBuildToolsRecordedNone(t *testing.T) {
	t.Parallel()
	var wss Workspaces
	defer wss.Close()
	dir := t.TempDir()
	for _, c := range []struct {
		tools []string
		none  bool
	}{{[]string{}, true}, {nil, false}, {[]string{builtin.NameFSRead}, false}} {
		reg, _, err := BuildTools(&World{}, &wss, transcript.Config{Workspace: dir, Tools: c.tools}, ToolSetup{})
		if err != nil {
			t.Fatal(err)
		}
		if (reg.Len() == 0) != c.none {
			t.Errorf("tools %#v: %d tools offered", c.tools, reg.Len())
		}
	}
}
