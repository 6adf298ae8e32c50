package openai

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/internal/wire"
)

// The two flavours, told apart by Options.Name.
const (
	// NameOpenAI is api.openai.com: a key is required.
	NameOpenAI = "openai"
	// NameLocal is an OpenAI-compatible local server (llama-server,
	// Ollama): no key is needed and cache_prompt is sent.
	NameLocal = "local"
)

// Defaults of each flavour.
const (
	DefaultModel        = "gpt-5-mini"
	DefaultBaseURL      = "https://api.openai.com"
	LocalDefaultModel   = "local"
	LocalDefaultBaseURL = "http://127.0.0.1:8080"
)

// Options configures a Client.
type Options struct {
	// Name picks the flavour: NameOpenAI (the default when empty) or NameLocal.
	Name string
	// BaseURL is the server's root; a trailing /v1 is accepted and not
	// doubled. Empty means the flavour's default.
	BaseURL string
	// APIKey is sent as a bearer token when set. It never appears in an
	// error message. Required by the openai flavour.
	APIKey string
	// HTTPClient sends the requests. Nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock used to read a retry-after date. Nil means time.Now.
	Now func() time.Time
	// Timeouts bound the server's silences; zero fields mean the defaults.
	Timeouts provider.Timeouts
}

// Client talks to a Chat Completions endpoint. It is safe for concurrent use.
type Client struct {
	name  string
	model string
	base  string
	w     wire.Client // name, key, HTTP client, clock; sends and fails
}

var _ provider.Provider = (*Client)(nil)

// New returns a client of the flavour opts.Name names.
func New(opts Options) (*Client, error) {
	c := &Client{name: opts.Name, base: strings.TrimRight(opts.BaseURL, "/")}
	var base string
	switch c.name {
	case "", NameOpenAI:
		c.name, c.model, base = NameOpenAI, DefaultModel, DefaultBaseURL
	case NameLocal:
		c.model, base = LocalDefaultModel, LocalDefaultBaseURL
	default:
		return nil, fmt.Errorf("openai: unknown flavour %q (want %q or %q)", opts.Name, NameOpenAI, NameLocal)
	}
	if c.base == "" {
		c.base = base
	}
	c.w = wire.Client{Provider: c.name, Key: opts.APIKey, HTTP: opts.HTTPClient, Now: opts.Now, RetryableType: retryableType, Timeouts: opts.Timeouts}
	return c, nil
}

// Name returns the flavour: "openai" or "local".
func (c *Client) Name() string { return c.name }

// DefaultModel returns the flavour's default model.
func (c *Client) DefaultModel() string { return c.model }

// endpoint is the chat completions URL; a base that already ends in /v1 is
// not given a second one.
func (c *Client) endpoint() string {
	if strings.HasSuffix(c.base, "/v1") {
		return c.base + "/chat/completions"
	}
	return c.base + "/v1/chat/completions"
}

// Complete sends the request with streaming on and assembles the answer.
func (c *Client) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if c.w.Key == "" && c.name == NameOpenAI {
		return nil, c.w.Fail(false, "no API key set (OPENAI_API_KEY)")
	}
	var header map[string]string
	if c.w.Key != "" {
		header = map[string]string{"Authorization": "Bearer " + c.w.Key}
	}
	resp, err := c.w.Post(ctx, c.endpoint(), c.buildRequest(req), header)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if wire.IsJSON(resp.Response) {
		// A server that ignores "stream" answers with the whole completion.
		return c.readCompletion(ctx, resp.Body)
	}
	return c.readStream(ctx, resp.Body, resp.Progress, req.OnDelta)
}

// stopReason maps finish_reason to the neutral stop reason. Some local
// servers finish a turn that calls tools with "stop": the calls decide.
func stopReason(finish string, calls int) string {
	switch finish {
	case "tool_calls", "function_call":
		return provider.StopToolUse
	case "length":
		return provider.StopMaxTokens
	case "stop", "":
		if calls > 0 {
			return provider.StopToolUse
		}
		if finish == "stop" {
			return provider.StopEndTurn
		}
	}
	return provider.StopOther
}

// retryableType reports whether an error type names a transient failure,
// in the spellings of OpenAI, llama-server and Anthropic-style proxies.
func retryableType(typ string) bool {
	switch typ {
	case "overloaded_error", "rate_limit_error", "rate_limit_exceeded", "api_error", "server_error", "unavailable_error":
		return true
	}
	return false
}
