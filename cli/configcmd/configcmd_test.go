package configcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

func TestShowLeavesSecretsOut(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	cfg := "[mcp.servers.s]\ncommand = \"x\"\nenv = { K = \"ENVSECRET\" }\n[mcp.servers.u]\nurl = \"https://h/?k=URLSECRET\"\nheaders = { H = \"HEADERSECRET\" }\n"
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"MECHA_HOME": home, "OPENAI_API_KEY": "sk-KEYSECRET"}
	for _, args := range [][]string{nil, {"--json"}} {
		var out bytes.Buffer
		env := &cmdkit.Env{Out: &out, Err: &out, Vars: func(k string) string { return vars[k] }}
		if err := cmdtest.Execute(NewCmdShow(env, nil), args...); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"ENVSECRET", "URLSECRET", "HEADERSECRET", "KEYSECRET"} {
			if strings.Contains(out.String(), s) {
				t.Errorf("config show %v prints %s:\n%s", args, s, out.String())
			}
		}
		if n := strings.Count(out.String(), cmdkit.Redacted); n != 3 {
			t.Errorf("config show %v: %d redacted values, want 3:\n%s", args, n, out.String())
		}
		if !strings.Contains(out.String(), "set") {
			t.Errorf("config show %v does not say the key is set", args)
		}
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	var got *ShowOptions
	if err := cmdtest.Execute(NewCmdShow(&cmdkit.Env{}, func(o *ShowOptions) error { got = o; return nil }), "--json"); err != nil || !got.JSON {
		t.Errorf("--json: %v, %+v", err, got)
	}
	if err := cmdtest.Execute(NewCmdPath(&cmdkit.Env{}, func(*PathOptions) error { return nil }), "x"); err == nil {
		t.Error("config path x: no error")
	}
}
