package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/internal/credential"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/harness/config"
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

// TestBuildToolsRefusePrivate: config.toml's [web_fetch] refuse_private
// reaches the web_fetch every door builds (read from $MECHA_HOME when the
// caller gives no config), and its spec says so. The control: the same
// loopback server is fetched without the switch.
func TestBuildToolsRefusePrivate(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "local secret")
	}))
	defer srv.Close()
	on, off, bad := t.TempDir(), t.TempDir(), t.TempDir()
	for dir, body := range map[string]string{on: "[web_fetch]\nrefuse_private = true\n", bad: "[web_fetch]\nrefuse_privat = true\n"} {
		if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ws := t.TempDir()
	fetch := func(home string, cfg *config.Config) (tool.Spec, tool.Result, error) {
		var wss Workspaces
		defer wss.Close()
		w := &World{Getenv: func(k string) string { return map[string]string{"MECHA_HOME": home}[k] }}
		rc := transcript.Config{Workspace: ws, PermissionMode: string(tool.ModeYes), Tools: []string{builtin.NameWebFetch}}
		reg, _, err := BuildTools(w, &wss, rc, ToolSetup{Config: cfg})
		if err != nil {
			return tool.Spec{}, tool.Result{}, err
		}
		wf, _ := reg.Get(builtin.NameWebFetch)
		res, err := wf.Run(context.Background(), json.RawMessage(`{"url":"`+srv.URL+`"}`))
		return wf.Spec(), res, err
	}
	for _, c := range []struct {
		name    string
		home    string
		cfg     *config.Config
		refused bool
	}{
		{"refuse_private in config.toml", on, nil, true},
		{"no config.toml (control)", off, nil, false},
		{"the caller's config, not the file", on, &config.Config{}, false},
		{"the caller's config with the switch", off, &config.Config{WebFetch: config.WebFetch{RefusePrivate: true}}, true},
	} {
		spec, res, err := fetch(c.home, c.cfg)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		said := strings.Contains(spec.Description, "private addresses (loopback included) are refused")
		refused := res.IsError && strings.Contains(res.Content, "refused to connect to 127.0.0.1: a loopback address")
		if said != c.refused || refused != c.refused || refused == strings.Contains(res.Content, "local secret") {
			t.Errorf("%s: spec %q, result %q, want refused %v", c.name, spec.Description, res.Content, c.refused)
		}
	}
	if _, _, err := fetch(bad, nil); err == nil || !strings.Contains(err.Error(), "unknown key web_fetch.refuse_privat") {
		t.Errorf("a config.toml that does not parse: %v, want its error", err)
	}
}
