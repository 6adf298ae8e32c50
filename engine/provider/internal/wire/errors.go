package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"

	"github.com/mecha-agent/mecha/engine/provider"
)

// MaxMessage bounds the length, in characters, of an error message taken
// from a server.
const MaxMessage = 300

// quoteMax bounds the part of a malformed payload Quote shows.
const quoteMax = 80

// Redact returns s with every occurrence of key replaced by "[redacted]".
// An empty key changes nothing.
func Redact(s, key string) string {
	if key == "" {
		return s
	}
	return strings.ReplaceAll(s, key, "[redacted]")
}

// OneLine folds every run of white space in s, newlines included, into one
// space and trims both ends. When limit > 0 and more than limit characters
// remain, it keeps the first limit and appends "...".
func OneLine(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); limit > 0 && len(r) > limit {
		s = string(r[:limit]) + "..."
	}
	return s
}

// ErrorBody reads an error answer's type and message from
// {"error":{"type":..,"message":..}} as Anthropic, OpenAI and llama-server
// send it, {"error":"..."} as Ollama does, or a top-level "message". It
// returns two empty strings for a body that is not JSON.
func ErrorBody(body []byte) (typ, msg string) {
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

// clean makes a server's text fit an error message: the key redacted, then
// folded onto one line of at most MaxMessage characters.
func (w *Client) clean(s string) string {
	return OneLine(Redact(s, w.Key), MaxMessage)
}

// Quote quotes the start of a malformed payload for an error message, with
// the key redacted before the cut, so that no prefix of it survives.
func (w *Client) Quote(b []byte) string {
	s := Redact(string(b), w.Key)
	if r := []rune(s); len(r) > quoteMax {
		return fmt.Sprintf("%q...", string(r[:quoteMax]))
	}
	return fmt.Sprintf("%q", s)
}

// Fail returns a *provider.Error whose message is the formatted text,
// cleaned.
func (w *Client) Fail(retryable bool, format string, args ...any) *provider.Error {
	return &provider.Error{Provider: w.Provider, Message: w.clean(fmt.Sprintf(format, args...)), Retryable: retryable}
}

// TransportError describes a request that got no HTTP answer, or whose
// answer could not be read. A refused connection is not retried (nothing
// listens there); a reset or a timeout is. When ctx is done, the result is
// ctx's error, prefixed with the client's name.
func (w *Client) TransportError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", w.Provider, ctx.Err())
	}
	return w.Fail(!errors.Is(err, syscall.ECONNREFUSED), "%v", err)
}

// HTTPError turns a non-2xx answer into a *provider.Error, reading at most
// 64 KiB of its body. It does not close the body.
func (w *Client) HTTPError(resp *http.Response) *provider.Error {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	typ, msg := ErrorBody(body)
	if msg == "" {
		msg = strings.TrimSpace(string(body))
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
		if w.Key == "" {
			msg = "the server wants an API key and none is set: " + msg
		} else {
			msg = "the API key was refused: " + msg
		}
	}
	return &provider.Error{
		Provider:   w.Provider,
		Status:     resp.StatusCode,
		Type:       w.clean(typ),
		Message:    w.clean(msg),
		Retryable:  RetryableStatus(resp.StatusCode) || w.retryableType(typ),
		RetryAfter: RetryAfterFromHeader(resp.Header, w.now()),
	}
}

// StreamError turns an error the server reported inside a 2xx answer (an
// error event mid-stream, an error object in place of a completion) into a
// *provider.Error.
func (w *Client) StreamError(typ, msg string) *provider.Error {
	if msg == "" {
		msg = "error event in the stream"
	}
	return &provider.Error{Provider: w.Provider, Type: w.clean(typ), Message: w.clean(msg), Retryable: w.retryableType(typ)}
}

func (w *Client) retryableType(typ string) bool {
	return w.RetryableType != nil && w.RetryableType(typ)
}
