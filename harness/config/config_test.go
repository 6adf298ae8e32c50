package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/record/pricing"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.toml", `
default_provider = "local"
reflect = true

[prices.anthropic."claude-opus-5"]
input = 15.0
output = 75.0
cache_read = 1.5
cache_write = 18.75

[providers.local]
model = "qwen3"

[web_fetch]
refuse_private = true

[chat]
notify = "osc777"

[mcp.servers.mail]
command = "mail-mcp"
tools = ["read_inbox", "send_email", "list_folders"]
capabilities = ["reads_workspace"]

[mcp.servers.mail.tool_capabilities]
read_inbox = ["reads_workspace", "external"]
send_email = ["reaches_network"]
list_folders = []
`)
	c, err := Load(good)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.Prices().Lookup("anthropic", "claude-opus-5")
	if !ok || p.Output != 75 || *p.CacheWrite != 18.75 || c.Model("local") != "qwen3" || c.Model("openai") != "" || c.DefaultProvider != "local" || !c.Reflect || !c.WebFetch.RefusePrivate || c.Chat.Notify != "osc777" || c.Path != good {
		t.Errorf("config = %+v", c)
	}
	if m := c.MCP.Servers["mail"]; len(m.Tools) != 3 || len(m.Capabilities) != 1 || len(m.ToolCapabilities) != 3 ||
		strings.Join(m.ToolCapabilities["read_inbox"], ",") != "reads_workspace,external" || m.ToolCapabilities["list_folders"] == nil {
		t.Errorf("mcp.servers.mail = %+v", m)
	}
	if len(c.FilePrices) != 1 || len(c.FilePrices["anthropic"]) != 1 {
		t.Errorf("the file's own prices = %v", c.FilePrices)
	}
	// With no file, or none reachable, the prices are the built-in table.
	builtin := pricing.Builtin().Table
	if c, err := Load(filepath.Join(dir, "missing.toml")); err != nil || !reflect.DeepEqual(c.Prices(), builtin) || c.FilePrices != nil || c.WebFetch.RefusePrivate {
		t.Errorf("missing file: %+v, %v", c, err)
	}
	if c, err := Load(filepath.Join(good, "config.toml")); err != nil || !reflect.DeepEqual(c.Prices(), builtin) {
		t.Errorf("a path through a file: %+v, %v", c, err)
	}
	for name, tc := range map[string]struct{ body, want string }{
		"typo.toml":     {"[prices.a.m]\ninput = 1\noutptu = 2\n", "line 3: unknown key prices.a.m.outptu"},
		"syntax.toml":   {"[prices\n", "line 1"},
		"negative.toml": {"[prices.a.m]\ninput = -1\n", `prices.a."m".input = -1 is not a price: negative`},
		"type.toml":     {"[prices.a.m]\ninput = \"cheap\"\n", "line 2 column 9: prices.a.m.input: "},
		// 1e308 is finite, but the cost of a few tokens at it is not.
		"huge.toml": {"[prices.a.m]\ninput = 1\noutput = 1e308\n", `huge.toml: pricing: prices.a."m".output = 1e+308 is not a price: more than 1e+06 USD per million tokens`},
		"nan.toml":  {"[prices.a.m]\ninput = nan\n", `prices.a."m".input = NaN is not a price: not a number`},
		"inf.toml":  {"[prices.a.\"*\"]\ncache_read = inf\n", `prices.a."*".cache_read = +Inf is not a price: infinite`},
		// go-toml decodes an integer into a float64 field as a float, so
		// one past int64 is a large price, not an overflow...
		"int64.toml": {"[prices.a.m]\ninput = 99999999999999999999\n", `prices.a."m".input = 1e+20 is not a price: more than`},
		// ...and one past float64 is out of range, its digits clipped.
		"range.toml":    {"[prices.a.m]\ninput = 1" + strings.Repeat("0", 400) + "\n", `line 2 column 9: prices.a.m.input: toml: unable to parse float: strconv.ParseFloat: parsing "1` + strings.Repeat("0", 38) + `…": value out of range`},
		"timeout.toml":  {"[providers.local]\nidle_timeout = \"5 min\"\n", `line 2 column 16: providers.local.idle_timeout: toml: "5 min" is not a duration`},
		"zero.toml":     {"[providers.local]\nconnect_timeout = \"0s\"\n", `"0s" is not a positive duration`},
		"unitless.toml": {"[providers.local]\nrequest_timeout = 90\n", `"90" is not a duration (write it like "90s" or "10m")`},
		"reflect.toml":  {"reflect = \"yes\"\n", "line 1 column 11: reflect: "},
		"typo2.toml":    {"[providers.local]\nrequest_timeot = \"9s\"\n", "line 2: unknown key providers.local.request_timeot"},
		"webfetch.toml": {"[web_fetch]\nrefuse_privat = true\n", "line 2: unknown key web_fetch.refuse_privat"},
		"private.toml":  {"[web_fetch]\nrefuse_private = \"yes\"\n", "line 2 column 18: web_fetch.refuse_private: "},
		"notify.toml":   {"[chat]\nnotify = \"beep\"\n", `[chat] notify = "beep" is not a way to notify (want one of bell, osc9, osc777, off)`},
		// Per-tool capabilities nested under tools cannot be: TOML has tools
		// as a list; the error points at the table that holds them.
		"nested.toml": {"[mcp.servers.m]\ncommand = \"x\"\ntools = [\"a\"]\n[mcp.servers.m.tools.a]\ncapabilities = []\n",
			"(per-tool capabilities go in [mcp.servers.NAME.tool_capabilities] as TOOL = [...])"},
		"nested2.toml": {"[mcp.servers.m.tools.a]\ncapabilities = []\n",
			"(per-tool capabilities go in [mcp.servers.NAME.tool_capabilities] as TOOL = [...])"},
		"toolcaps.toml": {"[mcp.servers.m.tool_capabilities]\na = \"external\"\n", "line 2 column 5: mcp.servers.m.tool_capabilities.a: "},
	} {
		_, err := Load(write(name, tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error %v, want one line containing %q", name, err, tc.want)
		}
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte(`
[providers.local]
request_timeout = "90s"
idle_timeout = "20m"

[providers.anthropic]
connect_timeout = "5s"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Timeouts{
		"local":     {Connect: 90 * time.Second, FirstByte: 90 * time.Second, Idle: 20 * time.Minute},
		"anthropic": {Connect: 5 * time.Second},
		"openai":    {},
	} {
		if got := c.Timeouts(name); got != want {
			t.Errorf("Timeouts(%q) = %+v, want %+v", name, got, want)
		}
	}
	if got := (*Config)(nil).Timeouts("local"); got != (Timeouts{}) {
		t.Errorf("nil config: %+v", got)
	}
}

func TestHome(t *testing.T) {
	t.Parallel()
	env := map[string]string{"HOME": "/home/u"}
	if h, _ := Home(func(k string) string { return env[k] }); h != "/home/u/.mecha" {
		t.Errorf("home = %s", h)
	}
	env["MECHA_HOME"] = "/srv/m"
	if h, _ := Home(func(k string) string { return env[k] }); h != "/srv/m" {
		t.Errorf("home = %s", h)
	}
}

func TestSessionDirAndHome(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tc := range []struct {
		getenv         func(string) string
		home, sessions string
	}{
		{env("HOME", "/h"), "/h/.mecha", "/h/.mecha/sessions"},
		{env("HOME", "/h", "MECHA_HOME", "/m"), "/m", "/m/sessions"},
		{env("HOME", "/h", "MECHA_HOME", "/m", "MECHA_SESSION_DIR", "/s"), "/m", "/s"},
	} {
		home, err := Home(tc.getenv)
		if err != nil || home != tc.home {
			t.Errorf("Home = %q, %v; want %q", home, err, tc.home)
		}
		dir, err := SessionDir(tc.getenv)
		if err != nil || dir != tc.sessions {
			t.Errorf("SessionDir = %q, %v; want %q", dir, err, tc.sessions)
		}
	}
}

// TestLoadPricesOverBuiltin: config.toml wins over the built-in table
// model by model, and the models it does not name keep the table's price.
func TestLoadPricesOverBuiltin(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[prices.anthropic.\"claude-sonnet-4-5\"]\ninput = 1\noutput = 2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := c.Prices().Lookup("anthropic", "claude-sonnet-4-5"); !ok || p.Input != 1 || p.Output != 2 || p.CacheRead != nil {
		t.Errorf("the configured model: %+v, %v; want config.toml's price whole", p, ok)
	}
	want, _ := pricing.Builtin().Table.Lookup("anthropic", "claude-opus-4-5")
	if p, ok := c.Prices().Lookup("anthropic", "claude-opus-4-5"); !ok || !reflect.DeepEqual(p, want) {
		t.Errorf("another model: %+v, %v; want the built-in %+v", p, ok, want)
	}
	if p, _ := pricing.Builtin().Table.Lookup("anthropic", "claude-sonnet-4-5"); p.Input != 3 {
		t.Errorf("loading changed the built-in table: %+v", p)
	}
}

func TestRemoteCheck(t *testing.T) {
	for _, c := range []struct {
		r  Remote
		ok bool
	}{
		{Remote{URL: "s3://bucket/prefix"}, true},
		{Remote{URL: "s3://bucket", Endpoint: "http://127.0.0.1:7070"}, true},
		{Remote{URL: "s3:///prefix"}, false},
		{Remote{URL: "gs://bucket"}, false},
		{Remote{URL: "s3://b", Endpoint: "ftp://host"}, false},
		{Remote{URL: "s3://b", Endpoint: "https://key:secret@host"}, false},
	} {
		err := c.r.Check()
		if (err == nil) != c.ok {
			t.Errorf("%+v: %v", c.r, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error shows the endpoint's password: %v", err)
		}
	}
}
