package providertest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/anthropic"
	"github.com/mecha-agent/mecha/engine/provider/openai"
	"github.com/mecha-agent/mecha/record/transcript"
	"github.com/mecha-agent/mecha/testkit/fakellm"
)

// testKey is the key the clients send. No error may ever contain it.
const testKey = "sk-test-SECRET-7f3a9c2e1b"

// flavour is one client configuration under test.
type flavour struct {
	name     string // the subtest's name
	provider string // the provider's Name
	wire     string // "anthropic" or "openai"
	key      string // the key the client sends, and the fake requires
	fake     fakellm.Options
	newBase  func(url string) string // the base URL given to the client
	make     func(base, key string, x extras) provider.Provider
	x        extras // what start gives make
}

// extras are the client options a test may set besides base and key.
type extras struct {
	timeouts provider.Timeouts
	http     *http.Client // nil: http.DefaultClient
}

func newAnthropic(base, key string, x extras) provider.Provider {
	return anthropic.New(anthropic.Options{BaseURL: base, APIKey: key, Timeouts: x.timeouts, HTTPClient: x.http})
}

func newOpenAI(name string) func(base, key string, x extras) provider.Provider {
	return func(base, key string, x extras) provider.Provider {
		p, err := openai.New(openai.Options{Name: name, BaseURL: base, APIKey: key, Timeouts: x.timeouts, HTTPClient: x.http})
		if err != nil {
			panic(err)
		}
		return p
	}
}

func flavours() []flavour {
	return []flavour{
		{name: "anthropic", provider: "anthropic", wire: "anthropic", key: testKey, make: newAnthropic},
		{name: "anthropic-split", provider: "anthropic", wire: "anthropic", key: testKey, make: newAnthropic,
			fake: fakellm.Options{SplitArgs: 2}},
		{name: "openai", provider: "openai", wire: "openai", key: testKey, make: newOpenAI(openai.NameOpenAI)},
		{name: "openai-v1-base", provider: "openai", wire: "openai", key: testKey, make: newOpenAI(openai.NameOpenAI),
			newBase: func(url string) string { return url + "/v1/" }, fake: fakellm.Options{SplitArgs: 1}},
		{name: "local", provider: "local", wire: "openai", make: newOpenAI(openai.NameLocal)},
		{name: "local-noindex", provider: "local", wire: "openai", key: testKey, make: newOpenAI(openai.NameLocal),
			fake: fakellm.Options{NoIndex: true, SplitArgs: 3}},
		// Mistral: content as lists of text and thinking parts.
		{name: "openai-content-parts", provider: "openai", wire: "openai", key: testKey, make: newOpenAI(openai.NameOpenAI),
			fake: fakellm.Options{ContentParts: true}},
	}
}

// start serves script with a fake and returns a client pointed at it.
func (f flavour) start(t *testing.T, script string) (provider.Provider, *fakellm.Server) {
	t.Helper()
	s, err := fakellm.ParseScript([]byte(script))
	if err != nil {
		t.Fatal(err)
	}
	opts := f.fake
	opts.APIKey = f.key
	srv := fakellm.New(t, s, opts)
	base := srv.URL()
	if f.newBase != nil {
		base = f.newBase(base)
	}
	return f.make(base, f.key, f.x), srv
}

// forEach runs test once per flavour, in parallel.
func forEach(t *testing.T, test func(t *testing.T, f flavour)) {
	t.Helper()
	for _, f := range flavours() {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			test(t, f)
		})
	}
}

// ask sends a one-question request and records the streamed deltas.
func ask(p provider.Provider, req *provider.Request) (*provider.Response, string, error) {
	var deltas strings.Builder
	if req == nil {
		req = &provider.Request{Model: "test-model", MaxTokens: 1000,
			Messages: []transcript.Message{{Role: transcript.RoleUser, Content: []transcript.Block{transcript.TextBlock("hello?")}}}}
	}
	req.OnDelta = func(d provider.Delta) { deltas.WriteString(d.Kind + ":" + d.Text + "|") }
	resp, err := p.Complete(context.Background(), req)
	return resp, deltas.String(), err
}

// body decodes the body of the n-th request (0-based) the fake received.
func body(t *testing.T, srv *fakellm.Server, n int) map[string]any {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= n {
		t.Fatalf("the fake received %d requests, want more than %d", len(reqs), n)
	}
	var m map[string]any
	if err := json.Unmarshal(reqs[n].Body, &m); err != nil {
		t.Fatalf("request %d body: %v", n, err)
	}
	return m
}

// path walks a decoded JSON value: keys for objects, ints for arrays.
func path(v any, steps ...any) any {
	for _, s := range steps {
		switch s := s.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[s]
		case int:
			a, _ := v.([]any)
			if s >= len(a) {
				return nil
			}
			v = a[s]
		}
	}
	return v
}

// noKey fails when err's message, or any field of a *provider.Error in
// it, contains the test key or a prefix of it.
func noKey(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	if strings.Contains(err.Error(), testKey[:12]) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("error contains the API key: %v", err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("error is not one line: %q", err)
	}
}
