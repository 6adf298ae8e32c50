package mcpproxy

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// An upstream over streamable HTTP is reached through the SDK's own
// transport, whose connection the SDK's session must see as it is (it
// learns the negotiated version from the session, for its headers and its
// standing stream), so it is not wrapped as conn wraps the others. The
// params and answers pass byte for byte one level down instead: the HTTP
// client writes a request's kept params into the body it posts, and reads
// the answers out of the bodies it gets back (JSON or an event stream),
// before the SDK does. What the upstream sends of its own passes as the
// SDK encodes it, as over an HTTP client connection (see WatchHTTP).

// HTTPClient returns c (nil: http.DefaultClient's transport) with the
// params of what the proxy forwards posted as they came, and the
// upstream's answers to them kept as they came. Use it as the
// StreamableClientTransport's HTTPClient of the upstream.
func (p *Proxy) HTTPClient(c *http.Client) *http.Client {
	out := &http.Client{}
	if c != nil {
		*out = *c
	}
	base := out.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = &rawTransport{base: base, pending: map[string]*slot{}}
	return out
}

type rawTransport struct {
	base http.RoundTripper

	mu      sync.Mutex
	pending map[string]*slot // the JSON of a request's id -> its slot
}

func idKey(id jsonrpc.ID) string {
	b, _ := json.Marshal(id.Raw())
	return string(b)
}

func (t *rawTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if s := slotOf(req.Context()); s != nil && req.Method == http.MethodPost && req.Body != nil {
		body, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		if b, ok := t.substitute(s, body); ok {
			body = b
		}
		req = req.Clone(req.Context())
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	t.mu.Lock()
	waiting := len(t.pending) > 0
	t.mu.Unlock()
	if !waiting {
		return resp, nil
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case "application/json":
		resp.Body = &jsonBody{ReadCloser: resp.Body, t: t}
	case "text/event-stream":
		resp.Body = &eventBody{ReadCloser: resp.Body, t: t}
	}
	return resp, nil
}

// substitute puts s's params in the one message body holds, when it is
// the message s carries, and notes the call's id.
func (t *rawTransport) substitute(s *slot, body []byte) ([]byte, bool) {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, false
	}
	r, ok := msg.(*jsonrpc.Request)
	if !ok || !s.claim(r.Method) {
		return nil, false
	}
	out := *r
	out.Params = s.raw.params
	b, err := jsonrpc.EncodeMessage(&out)
	if err != nil {
		return nil, false
	}
	if r.IsCall() {
		k := idKey(r.ID)
		t.mu.Lock()
		t.pending[k] = s
		t.mu.Unlock()
		s.mu.Lock()
		s.forget = func() { t.mu.Lock(); delete(t.pending, k); t.mu.Unlock() }
		s.mu.Unlock()
	}
	return b, true
}

// seen fills the slot of a response read, whole message data.
func (t *rawTransport) seen(data []byte) {
	data = bytes.TrimSpace(data)
	var raws []json.RawMessage
	if len(data) > 0 && data[0] == '[' {
		if json.Unmarshal(data, &raws) != nil {
			return
		}
	} else {
		raws = []json.RawMessage{data}
	}
	for _, raw := range raws {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			continue
		}
		resp, ok := msg.(*jsonrpc.Response)
		if !ok {
			continue
		}
		k := idKey(resp.ID)
		t.mu.Lock()
		s := t.pending[k]
		delete(t.pending, k)
		t.mu.Unlock()
		if s != nil {
			s.answer(resp.Result, resp.Error)
		}
	}
}

// jsonBody reads a JSON answer through, then hands it whole to seen
// before the reader sees its end.
type jsonBody struct {
	io.ReadCloser
	t   *rawTransport
	buf bytes.Buffer
}

func (b *jsonBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.buf.Write(p[:n])
	if err == io.EOF {
		b.t.seen(b.buf.Bytes())
		b.buf.Reset()
	}
	return n, err
}

// eventBody reads an event stream through, handing each event's data to
// seen as soon as the blank line that ends the event has been read, before
// the bytes go on to the reader.
type eventBody struct {
	io.ReadCloser
	t    *rawTransport
	line []byte // the line being read
	data bytes.Buffer
}

func (b *eventBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	for _, c := range p[:n] {
		if c != '\n' {
			b.line = append(b.line, c)
			continue
		}
		b.endLine()
	}
	return n, err
}

func (b *eventBody) endLine() {
	line := bytes.TrimSuffix(b.line, []byte("\r"))
	b.line = b.line[:0]
	if len(line) == 0 {
		if b.data.Len() > 0 {
			b.t.seen(b.data.Bytes())
			b.data.Reset()
		}
		return
	}
	if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
		if b.data.Len() > 0 {
			b.data.WriteByte('\n')
		}
		b.data.Write(bytes.TrimPrefix(rest, []byte(" ")))
	}
}
