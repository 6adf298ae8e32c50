package cmdkit

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigDefaultProvider: a default_provider no provider answers to is
// refused as an error of config.toml, naming the file and the key, not
// reported as if -p had been given.
func TestConfigDefaultProvider(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{`default_provider = "local"`, ""},
		{``, ""},
		{`default_provider = "bogus"`, `config.toml: default_provider = "bogus" is not a provider (want one of anthropic, local, mock, openai)`},
	} {
		home := t.TempDir()
		path := filepath.Join(home, "config.toml")
		if err := os.WriteFile(path, []byte(tc.body+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		env := &Env{Vars: func(k string) string {
			if k == "MECHA_HOME" {
				return home
			}
			return ""
		}}
		c, err := env.Config()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v", tc.body, err)
		case tc.want == "" && c.Path != path:
			t.Errorf("%q: path %q", tc.body, c.Path)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), "config: "+path+": ") || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q: err %v, want %q naming %s", tc.body, err, tc.want, path)
		}
	}
}

// TestForOut: text for a terminal is made visible, for a pipe left whole.
func TestForOut(t *testing.T) {
	t.Parallel()
	hostile := "a\x1b]0;t\x07b\n"
	if got := (&Env{OutTTY: true}).ForOut(hostile); got != `a\x1b]0;t\x07b`+"\n" {
		t.Errorf("terminal: %q", got)
	}
	if got := (&Env{}).ForOut(hostile); got != hostile {
		t.Errorf("pipe: %q", got)
	}
	if got := (&Env{ErrTTY: true}).ForErr(hostile); got != `a\x1b]0;t\x07b`+"\n" {
		t.Errorf("stderr a terminal: %q", got)
	}
	if got := (&Env{OutTTY: true}).ForErr(hostile); got != hostile {
		t.Errorf("stderr a pipe: %q", got)
	}
}

// TestWriteJSON: what encoding/json leaves raw (a bidi override, a C1
// control) is written as a \u escape; the value decodes the same.
// WriteJSONLine writes the same on one line.
func TestWriteJSON(t *testing.T) {
	t.Parallel()
	in := map[string]string{"t": "a\x1b]0;t\x07\u202eb\u009b", "u": "v"}
	for name, write := range map[string]func(io.Writer, any) error{"WriteJSON": WriteJSON, "WriteJSONLine": WriteJSONLine} {
		var out strings.Builder
		if err := write(&out, in); err != nil {
			t.Fatal(err)
		}
		if strings.ContainsAny(out.String(), "\x1b\x07\u202e\u009b") {
			t.Errorf("%s: a raw control: %q", name, out.String())
		}
		if lines := strings.Count(out.String(), "\n"); (name == "WriteJSONLine") != (lines == 1) {
			t.Errorf("%s: %d lines: %q", name, lines, out.String())
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(out.String()), &back); err != nil || back["t"] != in["t"] {
			t.Errorf("%s: decoded %q, %v", name, back, err)
		}
	}
}
