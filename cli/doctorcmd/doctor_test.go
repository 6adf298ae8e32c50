package doctorcmd

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/cli/cmdkit"
	"github.com/mecha-agent/mecha/engine/sandbox"
	"github.com/mecha-agent/mecha/harness"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/record/pricing"
	"github.com/mecha-agent/mecha/testkit/cmdtest"
)

// testEnv is an Env on a fresh home with vars set and the given kernel.
func testEnv(t *testing.T, vars map[string]string) (*cmdkit.Env, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	all := map[string]string{"MECHA_HOME": home}
	for k, v := range vars {
		all[k] = v
	}
	var out bytes.Buffer
	// A day after the built-in price table's date: it is not stale.
	now := func() time.Time { return pricing.Builtin().Date.Add(24 * time.Hour) }
	return &cmdkit.Env{Out: &out, Err: &out, Vars: func(k string) string { return all[k] }, HTTPClient: &http.Client{}, Clock: now}, &out
}

func find(r *Report, name string) Check {
	for _, c := range r.Checks {
		if c.Name == name {
			return c
		}
	}
	return Check{}
}

func TestRun(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(`{"data":[{"id":"qwen3"}]}`))
	}))
	defer srv.Close()
	good := sandbox.Support{Landlock: 4, Seccomp: true, Namespaces: true}
	env, _ := testEnv(t, map[string]string{"MECHA_LOCAL_URL": srv.URL, "OPENAI_API_KEY": "sk-NOTSHOWN"})
	kernel := good
	probe := func() sandbox.Support { return kernel }
	r := Run(context.Background(), &Options{Env: env, Probe: probe, Timeout: time.Second})
	if !r.OK || r.Problems != 0 || r.Warnings != 1 || find(r, "anthropic").Status != Warning || find(r, "openai").Status != OK {
		t.Errorf("report %+v", r)
	}
	if c := find(r, "local"); c.Status != OK || !strings.Contains(c.Detail, "serving qwen3") {
		t.Errorf("local: %+v", c)
	}
	if c := find(r, "sandbox"); c.Status != OK || !strings.Contains(c.Detail, "ABI 4") || !strings.Contains(c.Detail, "namespaces") {
		t.Errorf("sandbox: %+v", c)
	}
	// Namespaces refused (a container): a warning that says what to allow.
	// The trial's own words say why.
	kernel = sandbox.Support{Landlock: 4, Seccomp: true, NamespacesWhy: "fork/exec /usr/bin/mecha: permission denied"}
	r = Run(context.Background(), &Options{Env: env, Probe: probe, Timeout: time.Second})
	if c := find(r, "sandbox"); c.Status != Warning || !strings.Contains(c.Detail, "user namespaces are refused") || !strings.Contains(c.Fix, "user namespaces") ||
		!strings.Contains(c.Detail, "(the trial: fork/exec /usr/bin/mecha: permission denied)") {
		t.Errorf("sandbox without namespaces: %+v", c)
	}
	kernel = good

	// A kernel without Landlock, a server that is not OpenAI-compatible.
	env, out := testEnv(t, map[string]string{"MECHA_LOCAL_URL": srv.URL + "/nope"})
	kernel = sandbox.Support{} // probe now tells of this kernel
	if err := cmdtest.Execute(NewCmdDoctor(env, nil)); err != nil {
		t.Fatalf("warnings failed the command: %v", err)
	}
	r = Run(context.Background(), &Options{Env: env, Probe: probe, Timeout: time.Second})
	if c := find(r, "sandbox"); c.Status != Warning || c.Fix == "" {
		t.Errorf("sandbox without Landlock: %+v", c)
	}
	if c := find(r, "local"); c.Status != Warning || !strings.Contains(c.Detail, "404") {
		t.Errorf("local 404: %+v", c)
	}
	if strings.Contains(out.String(), "NOTSHOWN") {
		t.Error("a key is shown")
	}
}

func TestDefaultProviderMakesAProblem(t *testing.T) {
	t.Parallel()
	env, _ := testEnv(t, nil)
	kernel := sandbox.Support{Landlock: 1, Seccomp: true, Namespaces: true}
	probe := func() sandbox.Support { return kernel }
	home, _ := env.Home()
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("default_provider = \"anthropic\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := Run(context.Background(), &Options{Env: env, Probe: probe, Timeout: time.Second, MCP: harness.MCP{Off: true}})
	if r.OK || find(r, "anthropic").Status != Problem || find(r, "openai").Status != Warning {
		t.Errorf("report %+v", r)
	}
	err := cmdtest.Execute(NewCmdDoctor(env, nil), "--no-mcp")
	if err == nil || err.Error() != "doctor: 1 problem found" {
		t.Errorf("error %v", err)
	}
}

func TestFlags(t *testing.T) {
	t.Parallel()
	var got *Options
	runF := func(_ context.Context, o *Options) error { got = o; return nil }
	if err := cmdtest.Execute(NewCmdDoctor(&cmdkit.Env{}, runF), "--json", "--timeout", "9s", "--mcp-config", "a.json"); err != nil ||
		!got.JSON || got.Timeout != 9*time.Second || len(got.MCP.Files) != 1 {
		t.Errorf("%v %+v", err, got)
	}
	for _, args := range [][]string{{"--timeout", "0s"}, {"extra"}} {
		if err := cmdtest.Execute(NewCmdDoctor(&cmdkit.Env{}, runF), args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestHumanBytes(t *testing.T) {
	t.Parallel()
	for n, want := range map[uint64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536 << 20: "1.5 GiB", 3 << 50: "3072.0 TiB"} {
		if got := humanBytes(n); got != want {
			t.Errorf("humanBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestUnconfiguredLocalServer(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there now
	env, _ := testEnv(t, nil)
	home, _ := env.Home()
	for _, tc := range []struct {
		config string
		want   Status
	}{
		{"", OK},
		{"[providers.local]\nmodel = \"q\"\n", Warning},
		{"default_provider = \"local\"\n", Problem},
	} {
		if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(tc.config), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, _ := env.Config()
		// The default address, for MECHA_LOCAL_URL is not set: point the
		// check at the closed port through the client's transport.
		c := checkLocal(context.Background(), &cmdkit.Env{Vars: env.Vars, HTTPClient: redirectTo(url)}, cfg, time.Second)
		if c.Status != tc.want {
			t.Errorf("config %q: %+v, want %s", tc.config, c, tc.want)
		}
	}
}

// redirectTo is a client that sends every request to base instead.
func redirectTo(base string) *http.Client {
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		u := *r.URL
		u.Scheme, u.Host = "http", strings.TrimPrefix(base, "http://")
		r2 := r.Clone(r.Context())
		r2.URL = &u
		return http.DefaultTransport.RoundTrip(r2)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestPrices: the built-in table's date is reported; past 120 days it is a
// warning with the fix, unless config.toml replaces every price of it
// that charges something.
func TestPrices(t *testing.T) {
	t.Parallel()
	sheet := &pricing.Sheet{
		Date: time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC),
		Table: pricing.Table{
			"anthropic": {"a1": {Input: 3, Output: 15}, "a2": {Input: 1, Output: 5}},
			"openai":    {"o1": {Input: 1, Output: 2}},
			"local":     {pricing.Wildcard: {}},
		},
	}
	at := func(y int, m time.Month, d int) *cmdkit.Env {
		return &cmdkit.Env{Clock: func() time.Time { return time.Date(y, m, d, 12, 0, 0, 0, time.UTC) }}
	}
	own := func(t pricing.Table) *config.Config { return &config.Config{FilePrices: t} }
	tests := []struct {
		name   string
		env    *cmdkit.Env
		cfg    *config.Config
		status Status
		detail string
	}{
		{"fresh", at(2026, 3, 1), own(nil), OK, "built-in table of 2026-01-10 (50 days old), 3 prices of anthropic and openai in effect"},
		{"a day old", at(2026, 1, 11), own(nil), OK, "built-in table of 2026-01-10 (1 day old), 3 prices"},
		{"120 days", at(2026, 5, 10), own(nil), OK, "(120 days old)"},
		{"stale", at(2026, 5, 11), own(nil), Warning, "built-in table of 2026-01-10 is 121 days old (over 120): costs of anthropic and openai models may be wrong, for prices change"},
		{"stale, one model set", at(2027, 1, 1), own(pricing.Table{"anthropic": {"a1": {}}}), Warning, "costs of anthropic and openai models"},
		{"stale, a provider set whole", at(2027, 1, 1), own(pricing.Table{"openai": {pricing.Wildcard: {}}}), Warning, "costs of anthropic models may be wrong"},
		{"stale, every price set", at(2027, 1, 1), own(pricing.Table{"openai": {pricing.Wildcard: {}}, "anthropic": {"a1": {}, "a2": {}}}), OK,
			"built-in table of 2026-01-10: config.toml sets every price it would charge"},
	}
	for _, tt := range tests {
		c := pricesCheck(sheet, tt.cfg, tt.env)
		if c.Name != "prices" || c.Status != tt.status || !strings.Contains(c.Detail, tt.detail) {
			t.Errorf("%s: %+v, want %s with %q", tt.name, c, tt.status, tt.detail)
		}
		if (c.Status == Warning) != (c.Fix != "") || c.Status == Warning && !strings.Contains(c.Fix, "update mecha") {
			t.Errorf("%s: fix %q", tt.name, c.Fix)
		}
	}
	// The real table, read through Run with a clock past its date.
	env, _ := testEnv(t, nil)
	env.Clock = func() time.Time { return pricing.Builtin().Date.Add(pricing.StaleAfter + 48*time.Hour) }
	r := Run(context.Background(), &Options{Env: env, Probe: func() sandbox.Support { return sandbox.Support{Landlock: 4, Seccomp: true, Namespaces: true} }, Timeout: time.Second, MCP: harness.MCP{Off: true}})
	if c := find(r, "prices"); c.Status != Warning || !strings.Contains(c.Detail, pricing.Builtin().Date.Format("2006-01-02")+" is 122 days old") {
		t.Errorf("prices: %+v", c)
	}
}
