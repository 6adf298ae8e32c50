package harness

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/harness/config"
)

// TestProviderTimeouts: --request-timeout over config.toml's keys over the
// defaults (zero fields).
func TestProviderTimeouts(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(path, []byte("[providers.local]\nrequest_timeout = \"90s\"\nidle_timeout = \"20m\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup ProviderSetup
		prov  string
		want  provider.Timeouts
	}{
		{"no config", ProviderSetup{}, "local", provider.Timeouts{}},
		{"config", ProviderSetup{Config: cfg}, "local", provider.Timeouts{Connect: 90 * time.Second, FirstByte: 90 * time.Second, Idle: 20 * time.Minute}},
		{"another provider's config", ProviderSetup{Config: cfg}, "anthropic", provider.Timeouts{}},
		{"the flag over it", ProviderSetup{Config: cfg, RequestTimeout: time.Second}, "local", provider.Timeouts{Connect: time.Second, FirstByte: time.Second, Idle: time.Second}},
	}
	for _, tt := range tests {
		if got := tt.setup.Timeouts(tt.prov); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// TestProvidersAgreeWithConfig holds config.toml's list of providers (what
// default_provider may name) to the providers the harness builds.
func TestProvidersAgreeWithConfig(t *testing.T) {
	t.Parallel()
	if got, want := config.Providers, Providers(); !slices.Equal(got, want) {
		t.Errorf("config.Providers = %q, harness.Providers() = %q", got, want)
	}
}
