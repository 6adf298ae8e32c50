package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/provider"
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
}

// Client talks to the Anthropic Messages API. It is safe for concurrent use.
type Client struct {
	base string
	key  string
	http *http.Client
	now  func() time.Time
}

var _ provider.Provider = (*Client)(nil)

// New returns a client for the Messages API.
func New(opts Options) *Client {
	c := &Client{base: strings.TrimRight(opts.BaseURL, "/"), key: opts.APIKey, http: opts.HTTPClient, now: opts.Now}
	if c.base == "" {
		c.base = DefaultBaseURL
	}
	if c.http == nil {
		c.http = http.DefaultClient
	}
	if c.now == nil {
		c.now = time.Now
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
	if c.key == "" {
		return nil, c.fail(false, "no API key set (ANTHROPIC_API_KEY)")
	}
	body, err := encode(buildRequest(req))
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", Name, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint(), bytes.NewReader(body))
	if err != nil {
		return nil, c.fail(false, "bad base URL: %v", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "text/event-stream")
	hreq.Header.Set("X-Api-Key", c.key)
	hreq.Header.Set("Anthropic-Version", APIVersion)
	resp, err := c.http.Do(hreq)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, c.httpError(resp)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		// A proxy or a fake that does not stream answers with the whole message.
		return c.readMessage(ctx, resp.Body)
	}
	return c.readStream(ctx, resp.Body, req.OnDelta)
}

// encode marshals without escaping <, > and &, so logged requests stay readable.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
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
	}
	return provider.StopOther
}
