package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"github.com/mecha-agent/mecha/engine/provider"
)

// Client is the part of an HTTP provider client that does not depend on
// its wire format: who it is, its key, how it sends and how it fails. The
// zero value of each optional field means the real thing. A Client is safe
// for concurrent use.
type Client struct {
	// Provider is the client's name, the prefix of every error: anthropic,
	// openai, local.
	Provider string
	// Key is the API key. Every error redacts it; "" means none is set.
	Key string
	// HTTP sends the requests. Nil means http.DefaultClient.
	HTTP *http.Client
	// Now is the clock a retry-after date is read against. Nil means
	// time.Now.
	Now func() time.Time
	// RetryableType reports whether an error type the server gave names a
	// transient failure. Nil means that none does.
	RetryableType func(typ string) bool
	// Timeouts bound the silences of each request (see provider.Timeouts);
	// zero fields mean the defaults.
	Timeouts provider.Timeouts
}

// Answer is a 2xx answer. Its Body is watched by the request's timeouts: a
// read cut by one fails with a *provider.Error that says which. The reader
// of an event stream calls Progress for each event that is part of the
// answer; the bytes of a JSON answer count by themselves. Closing the Body
// ends the watch.
type Answer struct {
	*http.Response
	dog *watchdog
}

// Progress records that a part of the answer arrived: it ends the wait for
// the first byte and restarts the idle timeout.
func (a *Answer) Progress() { a.dog.progress() }

func (w *Client) now() time.Time {
	if w.Now == nil {
		return time.Now()
	}
	return w.Now()
}

func (w *Client) httpClient() *http.Client {
	if w.HTTP == nil {
		return http.DefaultClient
	}
	return w.HTTP
}

// Post encodes v as JSON and posts it to url, asking for an event stream,
// with the given header fields set besides Content-Type and Accept. It
// returns the answer when its status is 2xx and it is an event stream or
// JSON (or says nothing of its type); the caller closes its body.
// Otherwise the answer is closed and the error is a *provider.Error
// (HTTPError, WrongContentType, TransportError, a timeout, or a bad url),
// the context's error when ctx is done, or an encoding error.
func (w *Client) Post(ctx context.Context, url string, v any, header map[string]string) (*Answer, error) {
	body, err := encode(v)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", w.Provider, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, w.Fail(false, "bad base URL: %v", err)
	}
	// A base with no http or https scheme, or no host, would fail the
	// same way on every attempt: it is not retried.
	if u := req.URL; (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, w.Fail(false, "bad base URL %q: it needs http:// or https:// and a host (as in http://127.0.0.1:8080)", u.Redacted())
	}
	reqCtx, dog := w.watch(ctx, req.URL.Redacted())
	req = req.WithContext(reqCtx)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for name, value := range header {
		req.Header.Set(name, value)
	}
	resp, err := w.httpClient().Do(req)
	if err != nil {
		dog.stop()
		if perr := dog.expired(); perr != nil && ctx.Err() == nil {
			return nil, perr
		}
		return nil, w.TransportError(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		defer dog.stop()
		defer resp.Body.Close()
		return nil, w.HTTPError(resp)
	}
	if perr := w.WrongContentType(resp, req.URL.Redacted()); perr != nil {
		dog.stop()
		resp.Body.Close()
		return nil, perr
	}
	resp.Body = &watchedBody{ReadCloser: resp.Body, dog: dog, json: IsJSON(resp)}
	return &Answer{Response: resp, dog: dog}, nil
}

// AsError returns err as a *provider.Error when it is one (a timeout a
// read of an Answer failed with), nil otherwise.
func AsError(err error) *provider.Error {
	var perr *provider.Error
	if errors.As(err, &perr) {
		return perr
	}
	return nil
}

// encode marshals without escaping <, > and &, so logged requests stay
// readable.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// bodyPeekMax bounds, in characters, the start of an unexpected body an
// error message shows.
const bodyPeekMax = 100

// WrongContentType returns the error of a 2xx answer to url that is
// neither an event stream nor JSON: a captive portal's login page, a
// proxy's notice. Retrying cannot help, so it is not Retryable; its
// message names the URL, the content type and the body's first
// bodyPeekMax characters on one line, the key redacted before the cut. It
// returns nil for an event stream, JSON, or an answer without a
// Content-Type (read as a stream, as before servers said). It reads from
// the body only when it fails.
func (w *Client) WrongContentType(resp *http.Response, url string) *provider.Error {
	ct := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	if ct == "" || mt == "text/event-stream" || mt == "application/json" {
		return nil
	}
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	body := OneLine(Redact(strings.ToValidUTF8(string(head), "\uFFFD"), w.Key), bodyPeekMax)
	if body == "" {
		body = "an empty body"
	}
	return &provider.Error{
		Provider: w.Provider,
		Status:   resp.StatusCode,
		Message:  w.clean(fmt.Sprintf("%s answered %s, not an event stream or JSON: %s", url, ct, body)),
	}
}

// IsJSON reports whether an answer is a whole JSON document rather than an
// event stream: what a proxy, a fake or a server that ignores "stream"
// sends.
func IsJSON(resp *http.Response) bool {
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	return mt == "application/json"
}

// ReadAnswer reads a whole, unstreamed answer of at most 64 MiB, decodes it
// into v, and returns the bytes read. A failure to read is Retryable (or
// the context's error); an answer that is not JSON is not.
func (w *Client) ReadAnswer(ctx context.Context, body io.Reader, v any) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		if ctx.Err() != nil {
			return nil, w.TransportError(ctx, err)
		}
		if perr := AsError(err); perr != nil {
			return nil, perr
		}
		return nil, w.Fail(true, "reading the answer: %v", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return nil, w.Fail(false, "malformed answer %s: %v", w.Quote(data), err)
	}
	return data, nil
}

// ToolInput turns a tool call's streamed arguments into its input: {} when
// empty or null, the JSON itself (compacted) when valid, and otherwise the
// text as a JSON string, so that the tool reports bad arguments to the
// model instead of the whole turn failing.
func ToolInput(s string) json.RawMessage {
	s = strings.TrimSpace(s)
	if s == "" || s == "null" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(s)) {
		var buf bytes.Buffer
		if json.Compact(&buf, []byte(s)) == nil {
			return buf.Bytes()
		}
	}
	b, _ := json.Marshal(s)
	return b
}
