package configcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/internal/cmdutil"
	"github.com/mecha-agent/mecha/internal/cmdutil/cmdtest"
)

func TestRedactURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                              "",
		"https://mcp.example.com/x":     "https://mcp.example.com/x",
		"https://bob:pw@h/x":            "https://bob:<redacted>@h/x",
		"https://bob@h/x":               "https://bob@h/x",
		"https://a:b@h":                 "https://a:<redacted>@h",
		"https://h/p/q@r:s":             "https://h/p/q@r:s",
		"https://h/x?token=t1&a=2#frag": "https://h/x?a=<redacted>&token=<redacted>#<redacted>",
		"https://h/x?%zz":               "https://h/x?%zz=<redacted>",
		"http://127.0.0.1:8080":         "http://127.0.0.1:8080",
		"https://${U}:${P}@h/${PATH}":   "https://${U}:<redacted>@h/${PATH}",
		"host:8080":                     "host:8080",
	} {
		got := RedactURL(in)
		if got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRedactArgs(t *testing.T) {
	t.Parallel()
	got := RedactArgs([]string{"serve", "--token", "t1", "--api-key=k1", "-v", "--client-secret", "s1", "--port", "8", "--password"})
	want := "serve --token <redacted> --api-key=<redacted> -v --client-secret <redacted> --port 8 --password"
	if strings.Join(got, " ") != want {
		t.Errorf("RedactArgs = %q, want %q", got, want)
	}
	if RedactArgs(nil) != nil {
		t.Error("RedactArgs(nil) is not nil")
	}
}

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
		env := &cmdutil.Env{Out: &out, Err: &out, Getenv: func(k string) string { return vars[k] }}
		if err := cmdtest.Execute(NewCmdShow(env, nil), args...); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{"ENVSECRET", "URLSECRET", "HEADERSECRET", "KEYSECRET"} {
			if strings.Contains(out.String(), s) {
				t.Errorf("config show %v prints %s:\n%s", args, s, out.String())
			}
		}
		if n := strings.Count(out.String(), Redacted); n != 3 {
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
	if err := cmdtest.Execute(NewCmdShow(&cmdutil.Env{}, func(o *ShowOptions) error { got = o; return nil }), "--json"); err != nil || !got.JSON {
		t.Errorf("--json: %v, %+v", err, got)
	}
	if err := cmdtest.Execute(NewCmdPath(&cmdutil.Env{}, func(*PathOptions) error { return nil }), "x"); err == nil {
		t.Error("config path x: no error")
	}
}
