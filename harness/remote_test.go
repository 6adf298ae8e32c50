package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/remote"
)

func TestRemoteName(t *testing.T) {
	one := &config.Config{Remotes: map[string]config.Remote{"team": {URL: "s3://b/p"}}}
	two := &config.Config{Remotes: map[string]config.Remote{"team": {URL: "s3://b/p"}, "ci": {URL: "s3://c"}}}
	for _, c := range []struct {
		cfg        *config.Config
		name, want string
		err        string
	}{
		{one, "", "team", ""},
		{one, "team", "team", ""},
		{one, "nope", "", `no remote "nope" in config.toml (configured: team)`},
		{two, "", "", "pass --remote, one of ci, team"},
		{&config.Config{}, "", "", "add a [remotes.NAME] table"},
	} {
		got, err := RemoteName(c.cfg, c.name)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("RemoteName(%q) = %q, %v; want %q, %q", c.name, got, err, c.want, c.err)
		}
	}
}

func TestRemoteCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "credentials")
	os.WriteFile(file, []byte("[default]\naws_access_key_id = D\naws_secret_access_key = dsecret\n\n[team]\naws_access_key_id = T\naws_secret_access_key = tsecret\naws_session_token = ttoken\n[half]\naws_access_key_id = H\n"), 0o600)
	env := func(kv ...string) func(string) string {
		m := map[string]string{"HOME": dir}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	c, err := RemoteCredentials(env("AWS_ACCESS_KEY_ID", "E", "AWS_SECRET_ACCESS_KEY", "esecret", "AWS_SHARED_CREDENTIALS_FILE", file))
	if err != nil || c.AccessKey != "E" || c.SecretKey != "esecret" || strings.Contains(c.Source, "esecret") {
		t.Errorf("environment first: %+v %v", c, err)
	}
	c, err = RemoteCredentials(env("AWS_SHARED_CREDENTIALS_FILE", file))
	if err != nil || c.AccessKey != "D" || !strings.Contains(c.Source, "[default]") {
		t.Errorf("default profile: %+v %v", c, err)
	}
	c, err = RemoteCredentials(env("AWS_SHARED_CREDENTIALS_FILE", file, "AWS_PROFILE", "team"))
	if err != nil || c.AccessKey != "T" || c.SessionToken != "ttoken" {
		t.Errorf("named profile: %+v %v", c, err)
	}
	for name, e := range map[string]func(string) string{
		"half a pair in the environment": env("AWS_ACCESS_KEY_ID", "E"),
		"half a pair in a profile":       env("AWS_SHARED_CREDENTIALS_FILE", file, "AWS_PROFILE", "half"),
		"no such profile":                env("AWS_SHARED_CREDENTIALS_FILE", file, "AWS_PROFILE", "gone"),
		"no file":                        env(),
	} {
		if _, err := RemoteCredentials(e); err == nil || strings.Contains(err.Error(), "dsecret") || strings.Contains(err.Error(), "tsecret") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := RemoteCredentials(env()); !errors.Is(err, remote.ErrNoCredentials) {
		t.Errorf("no file: %v, want ErrNoCredentials", err)
	}
}
