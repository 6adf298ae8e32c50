package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"

	"github.com/mecha-agent/mecha/provider"
)

// maxMessage bounds the length of an error message taken from a server.
const maxMessage = 300

// fail returns a *provider.Error with a cleaned, one-line message.
func (c *Client) fail(retryable bool, format string, args ...any) *provider.Error {
	return &provider.Error{Provider: Name, Message: c.clean(fmt.Sprintf(format, args...)), Retryable: retryable}
}

// transportError describes a request that got no HTTP answer. A refused
// connection is not retried (nothing listens there); a reset or a timeout is.
func (c *Client) transportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", Name, ctx.Err())
	}
	return c.fail(!errors.Is(err, syscall.ECONNREFUSED), "%v", err)
}

// httpError turns a non-2xx answer into a *provider.Error.
func (c *Client) httpError(resp *http.Response) *provider.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	typ, msg := errorBody(body)
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		msg = "the API key was refused: " + msg
	}
	return &provider.Error{
		Provider:   Name,
		Status:     resp.StatusCode,
		Type:       c.clean(typ),
		Message:    c.clean(msg),
		Retryable:  provider.RetryableStatus(resp.StatusCode) || retryableType(typ),
		RetryAfter: provider.RetryAfterFromHeader(resp.Header, c.now()),
	}
}

// streamError turns an error event received mid-stream into a *provider.Error.
func (c *Client) streamError(typ, msg string) *provider.Error {
	if msg == "" {
		msg = "error event in the stream"
	}
	return &provider.Error{Provider: Name, Type: c.clean(typ), Message: c.clean(msg), Retryable: retryableType(typ)}
}

func retryableType(typ string) bool {
	switch typ {
	case "overloaded_error", "rate_limit_error", "api_error":
		return true
	}
	return false
}

// errorBody reads {"error":{"type":..,"message":..}} as Anthropic, OpenAI and
// llama-server send it, and {"error":"..."} as Ollama does.
func errorBody(body []byte) (typ, msg string) {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", ""
	}
	var obj struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	var s string
	switch {
	case json.Unmarshal(v.Error, &obj) == nil && (obj.Type != "" || obj.Message != ""):
		return obj.Type, obj.Message
	case json.Unmarshal(v.Error, &s) == nil:
		return "", s
	}
	return "", v.Message
}

// clean makes a server's text fit an error message: the API key redacted,
// whitespace folded onto one line, at most maxMessage characters.
func (c *Client) clean(s string) string {
	if c.key != "" {
		s = strings.ReplaceAll(s, c.key, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxMessage {
		s = string(r[:maxMessage]) + "..."
	}
	return s
}

// snippet quotes the start of a malformed event for an error message. The
// key is redacted before cutting, so no prefix of it can survive the cut.
func (c *Client) snippet(b []byte) string {
	const n = 80
	s := string(b)
	if c.key != "" {
		s = strings.ReplaceAll(s, c.key, "[redacted]")
	}
	if r := []rune(s); len(r) > n {
		return fmt.Sprintf("%q...", string(r[:n]))
	}
	return fmt.Sprintf("%q", s)
}
