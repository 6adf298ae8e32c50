package harness

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/mock"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/harness/config"
	"github.com/mecha-agent/mecha/internal/textfmt"
)

// providerNames are the values -p accepts (config.Providers names them
// too, for config.toml's default_provider: a test holds the two equal).
var providerNames = []string{anthropic.Name, openai.NameOpenAI, openai.NameLocal, mock.Name}

// Providers are the names of the providers mecha can call, sorted.
func Providers() []string {
	names := slices.Clone(providerNames)
	sort.Strings(names)
	return names
}

// knownProvider reports whether -p accepts name; want lists, sorted, the
// names it accepts.
func knownProvider(name string) (ok bool, want string) {
	names := append([]string(nil), providerNames...)
	sort.Strings(names)
	return slices.Contains(names, name), strings.Join(names, ", ")
}

// KnownProvider reports whether -p accepts name: a provider mecha can call.
func KnownProvider(name string) bool {
	ok, _ := knownProvider(name)
	return ok
}

// DefaultModel returns the model a provider uses when -m is not given:
// config.toml's [providers.NAME] model, else the provider's own default.
func DefaultModel(cfg *config.Config, name string) string {
	if m := cfg.Model(name); m != "" {
		return m
	}
	switch name {
	case anthropic.Name:
		return anthropic.DefaultModel
	case openai.NameOpenAI:
		return openai.DefaultModel
	case openai.NameLocal:
		return openai.LocalDefaultModel
	case mock.Name:
		return mock.DefaultModel
	}
	return ""
}

// ProviderSetup is what building a provider needs besides its name.
type ProviderSetup struct {
	MockScript string       // --mock-script
	HTTPClient *http.Client // nil: the Env's
	// Config gives each provider its [providers.NAME] timeouts (nil: none).
	Config *config.Config
	// RequestTimeout is --request-timeout: when set, every timeout of
	// every provider, over config.toml's (0: not given).
	RequestTimeout time.Duration
}

// Timeouts returns the timeouts of the named provider: --request-timeout,
// else config.toml's, else (zero fields) the provider's defaults. They
// bound waits, not what is asked, so no record keeps them.
func (s ProviderSetup) Timeouts(name string) provider.Timeouts {
	if d := s.RequestTimeout; d > 0 {
		return provider.Timeouts{Connect: d, FirstByte: d, Idle: d}
	}
	t := s.Config.Timeouts(name)
	return provider.Timeouts{Connect: t.Connect, FirstByte: t.FirstByte, Idle: t.Idle}
}

// CheckMockScript refuses a --mock-script given with another provider
// than the mock, before anything is opened (NewProvider refuses it too).
func CheckMockScript(provider, script string) error {
	if script != "" && provider != mock.Name {
		return usagef("--mock-script goes with -p mock")
	}
	return nil
}

// NewProvider builds a provider by name, wrapped in retries that say on
// stderr when they wait. Credentials come from the environment and never
// leave the client.
func NewProvider(w *World, name string, setup ProviderSetup) (provider.Provider, error) {
	if setup.HTTPClient == nil {
		setup.HTTPClient = w.client()
	}
	var p provider.Provider
	switch name {
	case anthropic.Name:
		key := w.getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return nil, fmt.Errorf("anthropic: ANTHROPIC_API_KEY is not set")
		}
		p = anthropic.New(anthropic.Options{BaseURL: w.getenv("ANTHROPIC_BASE_URL"), APIKey: key, HTTPClient: setup.HTTPClient,
			Timeouts: setup.Timeouts(name)})
	case openai.NameOpenAI:
		key := w.getenv("OPENAI_API_KEY")
		if key == "" {
			return nil, fmt.Errorf("openai: OPENAI_API_KEY is not set")
		}
		c, err := openai.New(openai.Options{Name: openai.NameOpenAI, BaseURL: w.getenv("OPENAI_BASE_URL"), APIKey: key, HTTPClient: setup.HTTPClient,
			Timeouts: setup.Timeouts(name)})
		if err != nil {
			return nil, err
		}
		p = c
	case openai.NameLocal:
		c, err := openai.New(openai.Options{Name: openai.NameLocal, BaseURL: w.getenv("MECHA_LOCAL_URL"), HTTPClient: setup.HTTPClient,
			Timeouts: setup.Timeouts(name)})
		if err != nil {
			return nil, err
		}
		p = c
	case mock.Name:
		var script *mock.Script
		if setup.MockScript != "" {
			s, err := mock.LoadScript(setup.MockScript)
			if err != nil {
				return nil, err
			}
			script = s
		}
		return mock.New(script), nil
	default:
		_, want := knownProvider(name)
		return nil, usagef("unknown provider %q (want one of %s)", name, want)
	}
	if err := CheckMockScript(name, setup.MockScript); err != nil {
		return nil, err
	}
	return provider.WithRetry(p, provider.RetryOptions{
		OnRetry: func(attempt int, err error, wait time.Duration) {
			fmt.Fprintf(w.errw(), "retrying in %s (attempt %d): %s\n", wait.Round(time.Millisecond), attempt+1, retryNote(err))
		},
	}), nil
}

// retryNote is a failure about to be retried, in one short line: the
// provider, the HTTP status, the error's type and its message, clipped. A
// message that is the server's answer sent back raw (a JSON body it gave
// no message in, an HTML page from a proxy) is left out, the status's
// name said instead. The error that ends the retries is reported whole.
func retryNote(err error) string {
	var pe *provider.Error
	if !errors.As(err, &pe) {
		return textfmt.Clip(textfmt.OneLine(err.Error()), maxRetryNote)
	}
	parts := []string{pe.Provider}
	if pe.Status != 0 {
		parts = append(parts, fmt.Sprintf("HTTP %d", pe.Status))
	}
	if pe.Type != "" {
		parts = append(parts, pe.Type)
	}
	msg := textfmt.OneLine(pe.Message)
	switch {
	case strings.HasPrefix(msg, "{") || strings.HasPrefix(msg, "[") || strings.HasPrefix(msg, "<"):
		if pe.Type == "" && http.StatusText(pe.Status) != "" {
			parts = append(parts, http.StatusText(pe.Status))
		}
	case msg != "":
		parts = append(parts, textfmt.Clip(msg, maxRetryNote))
	}
	return strings.Join(parts, ": ")
}

// maxRetryNote bounds the message of a retry note, in characters.
const maxRetryNote = 120
