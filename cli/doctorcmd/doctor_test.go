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
	return &cmdkit.Env{Out: &out, Err: &out, Vars: func(k string) string { return all[k] }, HTTPClient: &http.Client{}}, &out
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
	good := sandbox.Support{Landlock: 4, Seccomp: true}
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
	if c := find(r, "sandbox"); c.Status != OK || !strings.Contains(c.Detail, "ABI 4") {
		t.Errorf("sandbox: %+v", c)
	}

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
	kernel := sandbox.Support{Landlock: 1, Seccomp: true}
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
