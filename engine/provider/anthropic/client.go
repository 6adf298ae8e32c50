package anthropic

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
	"github.com/mecha-agent/mecha/engine/provider/internal/wire"
)

const (
	// Name is the provider's name, as given to -p.
	Name = "anthropic"
	// DefaultModel is the model used when the request names none.
	DefaultModel = "claude-sonnet-4-5"
	// DefaultBaseURL is the API's address; the CLI overrides it with
	// $ANTHROPIC_BASE_URL.
	DefaultBaseURL = "https://api.anthropic.com"
	// APIVersion is sent as the anthropic-version header.
	APIVersion = "2023-06-01"
	// DefaultMaxTokens is sent as max_tokens when the request sets none
	// (the API requires the field).
	DefaultMaxTokens = 4096
)

// Options configures a Client.
type Options struct {
	// BaseURL is the server's root, without /v1. Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as x-api-key. It never appears in an error message.
	APIKey string
	// HTTPClient sends the requests. Nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now is the clock used to read a retry-after date. Nil means time.Now.
	Now func() time.Time
	// Timeouts bound the server's silences; zero fields mean the defaults.
	Timeouts provider.Timeouts
}

// Client talks to the Anthropic Messages API. It is safe for concurrent use.
type Client struct {
	base string
	w    wire.Client // name, key, HTTP client, clock; sends and fails
}

var _ provider.Provider = (*Client)(nil)

// New returns a client for the Messages API.
func New(opts Options) *Client {
	c := &Client{
		base: strings.TrimRight(opts.BaseURL, "/"),
		w:    wire.Client{Provider: Name, Key: opts.APIKey, HTTP: opts.HTTPClient, Now: opts.Now, RetryableType: retryableType, Timeouts: opts.Timeouts},
	}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	return c
}

// Name returns "anthropic".
func (c *Client) Name() string { return Name }

// DefaultModel returns DefaultModel.
func (c *Client) DefaultModel() string { return DefaultModel }

// endpoint is the messages URL; a base that already ends in /v1 is not
// given a second one.
func (c *Client) endpoint() string {
	if strings.HasSuffix(c.base, "/v1") {
		return c.base + "/messages"
	}
	return c.base + "/v1/messages"
}

// Complete sends the request with streaming on and assembles the answer.
func (c *Client) Complete(ctx context.Context, req *provider.Request) (*provider.Response, error) {
	if c.w.Key == "" {
		return nil, c.w.Fail(false, "no API key set (ANTHROPIC_API_KEY)")
	}
	resp, err := c.w.Post(ctx, c.endpoint(), buildRequest(req), map[string]string{
		"X-Api-Key":         c.w.Key,
		"Anthropic-Version": APIVersion,
	})
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if wire.IsJSON(resp.Response) {
		// A proxy or a fake that does not stream answers with the whole message.
		return c.readMessage(ctx, resp.Body)
	}
	return c.readStream(ctx, resp.Body, resp.Progress, req.OnDelta)
}

// stopReason maps the API's stop_reason to the neutral one.
func stopReason(s string) string {
	switch s {
	case "end_turn":
		return provider.StopEndTurn
	case "tool_use":
		return provider.StopToolUse
	case "max_tokens":
		return provider.StopMaxTokens
	case "pause_turn":
		return provider.StopPauseTurn
	}
	return provider.StopOther
}

// retryableType reports whether an error type names a transient failure.
func retryableType(typ string) bool {
	switch typ {
	case "overloaded_error", "rate_limit_error", "api_error":
		return true
	}
	return false
}
