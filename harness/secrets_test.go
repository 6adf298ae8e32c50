package harness

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/internal/credential"

	"github.com/mecha-agent/mecha/engine/tool"
	"github.com/mecha-agent/mecha/engine/tool/builtin"
	"github.com/mecha-agent/mecha/record/transcript"
)

// widened are a canary under each name the credential rule came to cover
// (issue 19, item 7), and in the userinfo of URLs whose variables' names
// say nothing: the variable, its value, the part of it that is the secret
// (the value when ""), and whether the variable still reaches commands (a
// URL with a user name alone is not withheld; its userinfo is redacted).
// Every secret holds one CANARY-... marker, unique to it, that leak looks
// for.
var widened = []struct {
	name, value, secret string
	inEnv               bool
}{
	{"MY_PRIVATE_KEY", "CANARY-private-key-7d1e0a", "", false},
	{"DB_PASS", "CANARY-db-pass-3c9f21", "", false},
	{"PASSWD", "CANARY-passwd-b7a3e0", "", false},
	{"MYSQL_PWD", "CANARY-mysql-pwd-91ac4f", "", false},
	{"AUTH", "CANARY-auth-55e0b2", "", false},
	{"NPM_AUTH", "CANARY-npm-auth-0f4d6c", "", false},
	{"SESSION_COOKIE", "CANARY-session-cookie-a18c", "", false},
	{"SESSION", "CANARY-session-2b6f9d", "", false},
	{"SLACK_WEBHOOK_URL", "https://hooks.slack.example/services/T0/B0/CANARY-webhook-6e2a", "", false},
	{"SENTRY_DSN", "CANARY-sentry-dsn-4e88a1", "", false},
	{"CONNECTION_STRING", "AccountName=a;AccountKey=CANARY-conn-str-9b0c", "", false},
	{"STRIPE_KEY", "CANARY-stripe-key-c3d2e1", "", false},
	{"DATABASE_URL", "postgres://canary_user:CANARY-pg-pw-8e1f7a@db.example:5432/app", "CANARY-pg-pw-8e1f7a", false},
	{"REDIS_URL", "redis://:CANARY-redis-pw-d4c1@cache.example:6379", "CANARY-redis-pw-d4c1", false},
	{"GIT_REMOTE", "https://CANARY-gh-token-as-user-1f0e@github.example/o/r.git", "CANARY-gh-token-as-user-1f0e", true},
}

// harmless are everyday variables the rule must leave alone: their values
// come back as they are.
var harmless = []string{
	"SSH_AUTH_SOCK=/tmp/ssh-XyZ/agent.4242",
	"XDG_SESSION_TYPE=wayland-harmless",
	"DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/1000/bus",
	"TOKENIZERS_PARALLELISM=false-harmless",
}

func secretOf(i int) string {
	if widened[i].secret != "" {
		return widened[i].secret
	}
	return widened[i].value
}

// markerOf is the CANARY-... part of secret i.
func markerOf(i int) string {
	s := secretOf(i)
	return s[strings.Index(s, "CANARY-"):]
}

func widenedEnviron() []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=/nowhere"}
	env = append(env, harmless...)
	for _, c := range widened {
		env = append(env, c.name+"="+c.value)
	}
	return env
}

// secretWorkspace holds each canary's secret in a file of its own, s<i>,
// as a key copied into a project would be, and every harmless value in
// harmless.txt.
func secretWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for i := range widened {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%02d", i)), []byte(secretOf(i)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var h strings.Builder
	for _, kv := range harmless {
		_, v, _ := strings.Cut(kv, "=")
		h.WriteString(v + "\n")
	}
	if err := os.WriteFile(filepath.Join(dir, "harmless.txt"), []byte(h.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// exposures are the commands that print secret i in each form: as it is;
// base64 at each of the three alignments inside a longer stream, in both
// alphabets, once ended by the value (padding) and once followed by more;
// hex, lower and upper case; and across the shell's head/tail cut (the
// head keeps 32 KiB: the cut falls 8 bytes into the marker).
func exposures(i int) map[string]string {
	f := fmt.Sprintf("s%02d", i)
	pad := builtin.DefaultMaxResultBytes/2 - strings.Index(secretOf(i), "CANARY-") - 8
	out := map[string]string{
		"raw":         "cat " + f,
		"hex":         "od -An -v -tx1 " + f + " | tr -d ' \\n'",
		"HEX":         "od -An -v -tx1 " + f + " | tr -d ' \\n' | tr a-f A-F",
		"across cut":  fmt.Sprintf("head -c %d /dev/zero | tr '\\0' a; cat %s; head -c 40000 /dev/zero | tr '\\0' b", pad, f),
		"base64 ends": "base64 -w0 " + f,
	}
	for k, p := range []string{"", "P", "PP"} {
		in := fmt.Sprintf("{ printf 'xyz%s'; cat %s; printf 'tail'; }", p, f)
		out[fmt.Sprintf("base64 align %d", k)] = in + " | base64 -w0"
		out[fmt.Sprintf("base64url align %d", k)] = in + " | base64 -w0 | tr '+/' '-_'"
	}
	return out
}

// leak returns how text shows a secret's marker ("" when it does not):
// the marker, or its first 8 bytes (what a cut through it leaves); 6 bytes
// of it in hex, either case; or 6 bytes of it in what a run of base64
// characters decodes to at any of its four alignments, in either
// alphabet. It decodes rather than matching the Redactor's own forms, so
// it is the same judge for the attack and the control.
func leak(text, secret string) string {
	if strings.Contains(text, secret) {
		return "the value"
	}
	if strings.Contains(text, secret[:8]) {
		return "its first 8 bytes"
	}
	for j := 0; j+6 <= len(secret); j++ {
		w := hex.EncodeToString([]byte(secret[j : j+6]))
		if strings.Contains(text, w) || strings.Contains(text, strings.ToUpper(w)) {
			return "hex of " + secret[j:j+6]
		}
	}
	isB64 := func(r rune) bool {
		return 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || strings.ContainsRune("+/-_", r)
	}
	for _, run := range strings.FieldsFunc(text, func(r rune) bool { return !isB64(r) }) {
		for off := 0; off < 4 && off < len(run); off++ {
			s := run[off:]
			s = s[:len(s)/4*4]
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				d, _ := enc.DecodeString(s)
				for j := 0; j+6 <= len(secret); j++ {
					if bytes.Contains(d, []byte(secret[j:j+6])) {
						return "base64 of " + secret[j:j+6]
					}
				}
			}
		}
	}
	return ""
}

// environHolder starts a process whose environment holds every canary, as
// mecha's own does, and returns its pid: a command that can read
// /proc/PID/environ (root, or the same user without the sandbox) finds
// each at whatever offset the environment puts it.
func environHolder(t *testing.T) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("needs /proc/PID/environ and GNU base64")
	}
	cmd := exec.Command("sleep", "600")
	cmd.Env = widenedEnviron()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd.Process.Pid
}

// runShell runs each command through sh and returns its output by name.
func runShell(t *testing.T, sh tool.Tool, commands map[string]string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for name, command := range commands {
		input, _ := json.Marshal(map[string]string{"command": command})
		res, err := sh.Run(context.Background(), input)
		if err != nil || res.IsError {
			t.Fatalf("%s: %q: %.300q, %v", name, command, res.Content, err)
		}
		out[name] = res.Content
	}
	return out
}

// TestBuildToolsRedactsWidenedSecrets: a canary under each widened name,
// in a URL's userinfo, printed as it is, in base64 at every alignment in
// both alphabets, in hex of either case, across the shell's cut, and in
// base64 and hex of a process's /proc/PID/environ, through the shell of
// the surface BuildTools builds: none comes back, each says what was
// redacted, and the harmless variables come back as they are.
func TestBuildToolsRedactsWidenedSecrets(t *testing.T) {
	t.Parallel()
	dir := secretWorkspace(t)
	pid := environHolder(t)
	world := &World{Getenv: func(string) string { return "" }, Environ: widenedEnviron}
	var wss Workspaces
	defer wss.Close()
	// The interlock is off: the shell is called many times, and redaction
	// is what is under test.
	rc := transcript.Config{Workspace: dir, PermissionMode: string(tool.ModeYes), Trifecta: string(tool.TrifectaOff)}
	reg, _, err := BuildTools(world, &wss, rc, ToolSetup{})
	if err != nil {
		t.Fatal(err)
	}
	sh, _ := reg.Get(builtin.NameShell)
	environ := runShell(t, sh, map[string]string{
		"environ base64": fmt.Sprintf("base64 -w0 /proc/%d/environ", pid),
		"environ hex":    fmt.Sprintf("od -An -v -tx1 /proc/%d/environ | tr -d ' \\n'", pid),
		"harmless":       "cat harmless.txt; env",
	})
	for _, kv := range harmless {
		_, v, _ := strings.Cut(kv, "=")
		if strings.Count(environ["harmless"], v) != 2 {
			t.Errorf("%s was redacted or withheld from the shell: %q", kv, environ["harmless"])
		}
	}
	for i, c := range widened {
		marker := markerOf(i)
		got := runShell(t, sh, exposures(i))
		got["environ base64"], got["environ hex"], got["env"] = environ["environ base64"], environ["environ hex"], environ["harmless"]
		for form, out := range got {
			if how := leak(out, marker); how != "" {
				t.Errorf("%s (%s): %s came back: %.300q", c.name, form, how, out)
			}
		}
		if !strings.Contains(got["raw"], "[redacted "+c.name+"]") {
			t.Errorf("%s: %q does not say what was redacted", c.name, got["raw"])
		}
	}
}

// TestBuildToolsRedactsWidenedSecretsControl runs the same commands
// through the shell without the redaction (the environment scrubbed as
// before): each canary comes back in each form, so the test above proves
// the redaction, and not commands that printed nothing.
func TestBuildToolsRedactsWidenedSecretsControl(t *testing.T) {
	t.Parallel()
	ws, err := builtin.NewWorkspace(secretWorkspace(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	pid := environHolder(t)
	sh := builtin.NewShell(ws, builtin.Options{Env: credential.Scrub(widenedEnviron())})
	environ := runShell(t, sh, map[string]string{
		"environ base64": fmt.Sprintf("base64 -w0 /proc/%d/environ", pid),
		"environ hex":    fmt.Sprintf("od -An -v -tx1 /proc/%d/environ | tr -d ' \\n'", pid),
		"env":            "env",
	})
	for i, c := range widened {
		marker := markerOf(i)
		got := runShell(t, sh, exposures(i))
		got["environ base64"], got["environ hex"] = environ["environ base64"], environ["environ hex"]
		for form, out := range got {
			if leak(out, marker) == "" {
				t.Errorf("%s (%s): the unredacted shell did not show the canary: %.200q", c.name, form, out)
			}
		}
		// The environment handed to commands withholds it all the same,
		// but for a URL with a user name alone.
		if strings.Contains(environ["env"], c.name+"=") != c.inEnv || credential.Held(c.name, c.value) == c.inEnv {
			t.Errorf("%s: in the shell's environment: %v, want %v", c.name, !c.inEnv, c.inEnv)
		}
	}
}

// TestShareSecrets: a shared copy is redacted of the remote's credentials
// wherever they were read from, the access key id included, though none
// of them is in the environment; Secrets, for tool results, leaves the
// file's out (no tool result can carry what nothing gave a tool).
func TestShareSecrets(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "credentials")
	if err := os.WriteFile(file, []byte("[team]\naws_access_key_id = AKIAEXAMPLEKEYID0001\naws_secret_access_key = s3cr3t-from-the-file-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"AWS_SHARED_CREDENTIALS_FILE": file, "AWS_PROFILE": "team"}
	w := &World{Getenv: func(k string) string { return vars[k] }, Environ: func() []string { return nil }}
	has := func(list []tool.Secret, v string) bool {
		for _, s := range list {
			if s.Value == v {
				return true
			}
		}
		return false
	}
	share := ShareSecrets(w)
	for _, v := range []string{"AKIAEXAMPLEKEYID0001", "s3cr3t-from-the-file-0123456789"} {
		if !has(share, v) {
			t.Errorf("ShareSecrets misses %q", v)
		}
		if has(Secrets(w), v) {
			t.Errorf("Secrets holds the file's %q", v)
		}
	}
	for _, s := range share {
		if s.Value == "" {
			t.Errorf("an empty secret %s", s.Name)
		}
	}
}
