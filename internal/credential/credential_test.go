package credential

import (
	"slices"
	"strings"
	"testing"
)

// TestNamed is the name rule both ways: names real environments give
// credentials, and everyday names, several of which hold a credential's
// word inside another word or in a place where it names no value.
func TestNamed(t *testing.T) {
	t.Parallel()
	credentials := []string{
		// the old list
		"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY",
		"AWS_SESSION_TOKEN", "CLIENT_SECRET", "DB_PASSWORD", "db_password", "GOOGLE_APPLICATION_CREDENTIALS",
		"MY_CREDENTIAL", "SECRET", "TOKEN",
		// widened (issue 19, item 7)
		"MY_PRIVATE_KEY", "PRIVATE_KEY", "PRIVATE_KEY_PEM", "DB_PASS", "PASS", "REDIS_PASS", "MYSQL_PWD", "PASSWD",
		"LDAP_PASSWD", "GPG_PASSPHRASE", "AUTH", "NPM_AUTH", "GIT_AUTH", "AUTH_HEADER", "SESSION", "SESSION_COOKIE",
		"COOKIE", "COOKIES", "SESSION_SECRET", "SLACK_WEBHOOK_URL", "DISCORD_WEBHOOK", "SENTRY_DSN", "DSN",
		"DATABASE_DSN", "CONNECTION_STRING", "AZURE_STORAGE_CONNECTION_STRING", "STRIPE_KEY", "SIGNING_KEY",
		"ENCRYPTION_KEY", "SSH_KEYS", "KEY", "REGISTRY_CREDS", "APIKEY", "MYAPIKEY",
		// words run together, camelCase, other separators
		"GITHUBTOKEN", "DBPASSWORD", "apiKey", "dbPassword", "githubToken", "sessionCookie", "privateKey",
		"npm-auth", "my.secret", "X_API_KEY_ID", "SECRETS", "TOKENS",
	}
	everyday := []string{
		"PATH", "HOME", "USER", "SHELL", "TERM", "LANG", "EDITOR", "PWD", "OLDPWD", "TMPDIR",
		"SSH_AUTH_SOCK", "XDG_SESSION_TYPE", "XDG_SESSION_ID", "XDG_SESSION_CLASS", "XDG_SESSION_DESKTOP",
		"DBUS_SESSION_BUS_ADDRESS", "DESKTOP_SESSION", "GDMSESSION", "SESSION_MANAGER", "GPG_AGENT_INFO",
		"XAUTHORITY", "KRB5CCNAME", "GIT_ASKPASS", "SSH_ASKPASS", "SUDO_ASKPASS", "BYPASS_CACHE",
		"TOKENIZERS_PARALLELISM", "KEYMAP", "HOTKEY", "AUTHOR", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
		"PASSWORD_STORE_DIR", "TOKEN_FILE", "SECRETS_PATH", "AUTH_SOCKET", "KDE_SESSION_VERSION",
		"AWS_ACCESS_KEY_ID", "AUTH_TYPE", "DATABASE_URL", "SSL_CERT_FILE", "KEYBOARD_LAYOUT", "",
	}
	for _, name := range credentials {
		if !Named(name) {
			t.Errorf("Named(%q) = false, want true", name)
		}
	}
	for _, name := range everyday {
		if Named(name) {
			t.Errorf("Named(%q) = true, want false", name)
		}
	}
}

func TestSplit(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"DB_PASS":        "DB PASS",
		"dbPassword":     "DB PASSWORD",
		"AWSSecret":      "AWSSECRET",
		"npm-auth.value": "NPM AUTH VALUE",
		"__X__":          "X",
		"a1B2":           "A1B2",
		"":               "",
	} {
		if got := strings.Join(split(in), " "); got != want {
			t.Errorf("split(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestInValue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		value string
		want  []string
		held  bool
	}{
		{"postgres://app:s3cr3t-pw@db.example:5432/app", []string{"app:s3cr3t-pw", "s3cr3t-pw"}, true},
		{"redis://:hunter2hunter2@cache:6379", []string{":hunter2hunter2", "hunter2hunter2"}, true},
		{"https://ghp_tokenAsUser@github.com/o/r.git", []string{"ghp_tokenAsUser"}, false},
		{"ssh://git@github.com/o/r.git", []string{"git"}, false},
		{"mysql://u:p%40ss%2Fword@h/db", []string{"u:p%40ss%2Fword", "u:p@ss/word", "p%40ss%2Fword", "p@ss/word"}, true},
		{"amqp://u:p@ss@h/vhost", []string{"u:p@ss", "p@ss"}, true}, // an unescaped @ in the password
		{"redis://a:pw1@h1,redis://b:pw2@h2", []string{"a:pw1", "pw1", "b:pw2", "pw2"}, true},
		{"postgres://h/db?user=app&password=pw%21x&sslmode=require", []string{"pw%21x", "pw!x"}, true},
		{"https://h/cb?access_token=tok#frag", []string{"tok"}, true},
		{"https://example.com/path?q=1", nil, false},
		{"/usr/bin:/bin", nil, false},
		{"user@example.com", nil, false},
		{"", nil, false},
	}
	for _, tt := range tests {
		got := InValue(tt.value)
		if !slices.Equal(got, tt.want) {
			t.Errorf("InValue(%q) = %q, want %q", tt.value, got, tt.want)
		}
		if held := Held("X", tt.value); held != tt.held {
			t.Errorf("Held(X, %q) = %v, want %v", tt.value, held, tt.held)
		}
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	env := []string{
		"PATH=/usr/bin", "DB_PASS=pw", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "DATABASE_URL=postgres://u:pw@h/db",
		"GIT_REMOTE=ssh://git@github.com/o/r", "NPM_AUTH=x", "XDG_SESSION_TYPE=wayland", "noequals",
	}
	want := []string{"PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "GIT_REMOTE=ssh://git@github.com/o/r", "XDG_SESSION_TYPE=wayland", "noequals"}
	if got := Scrub(env); !slices.Equal(got, want) {
		t.Errorf("Scrub = %q\nwant %q", got, want)
	}
}
