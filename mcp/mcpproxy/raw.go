package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK decodes every message into its own structs and encodes them
// again, so a field it does not know would be lost on the way through.
// The proxy keeps the bytes instead: each request or notification read
// from either side is tagged (a number in its _meta, seen only by the
// proxy's own middleware) and its params kept as they came; the
// middleware carries them, in a slot in the context, to the call it makes
// of the other side, whose connection writes the kept params in place of
// the SDK's encoding and keeps the answer's result (or error) as it came;
// that answer is what the middleware returns. The SDK's structs are used
// for routing only.

// tagKey is the _meta key of a tag. The middleware removes it before
// anything is forwarded; the kept params never had it.
const tagKey = "mecha.proxy/tag"

// rawParams is a message's params as read: absent is nil.
type rawParams struct {
	params json.RawMessage
}

// tags keeps the params of the messages read and not yet handled.
type tags struct {
	mu   sync.Mutex
	next uint64
	m    map[uint64]rawParams
}

// maxKept bounds the params kept for messages the SDK refused before
// the middleware saw them (a malformed request): the oldest go first.
const maxKept = 4096

// tag keeps req's params and returns req with a tag in its _meta.
func (t *tags) tag(req *jsonrpc.Request) *jsonrpc.Request {
	var obj map[string]json.RawMessage
	if len(req.Params) > 0 && !bytes.Equal(bytes.TrimSpace(req.Params), []byte("null")) {
		if json.Unmarshal(req.Params, &obj) != nil || obj == nil {
			return req // not an object: the SDK refuses it anyway
		}
	}
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok {
		if json.Unmarshal(m, &meta) != nil || meta == nil {
			return req // a _meta that is not an object: left to the SDK
		}
	}
	t.mu.Lock()
	if t.m == nil {
		t.m = map[uint64]rawParams{}
	}
	t.next++
	n := t.next
	t.m[n] = rawParams{params: append(json.RawMessage(nil), req.Params...)}
	if len(req.Params) == 0 {
		t.m[n] = rawParams{}
	}
	if len(t.m) > maxKept {
		delete(t.m, n-maxKept)
	}
	t.mu.Unlock()
	meta[tagKey], _ = json.Marshal(n)
	var err error
	if obj["_meta"], err = marshal(meta); err != nil {
		return req
	}
	b, err := marshal(obj)
	if err != nil {
		return req
	}
	out := *req
	out.Params = b
	return &out
}

// take removes the tag from p's _meta and returns the params kept for it.
func (t *tags) take(p mcp.Params) (rawParams, bool) {
	if isNil(p) {
		return rawParams{}, false
	}
	meta := p.GetMeta()
	v, ok := meta[tagKey]
	if !ok {
		return rawParams{}, false
	}
	delete(meta, tagKey)
	if len(meta) == 0 {
		p.SetMeta(nil)
	}
	f, ok := v.(float64)
	if !ok {
		return rawParams{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.m[uint64(f)]
	delete(t.m, uint64(f))
	return r, ok
}

// slot carries one message's kept params to the call the proxy makes of
// the other side, and brings back that side's answer as it came.
type slot struct {
	method string
	raw    rawParams

	mu       sync.Mutex
	sent     bool
	answered bool
	result   json.RawMessage
	err      *jsonrpc.Error
	// forget drops the call's wait for an answer that will not come (a
	// cancelled call the upstream does not answer).
	forget func()
}

type slotKey struct{}

func withSlot(ctx context.Context, s *slot) context.Context {
	if s == nil {
		return ctx
	}
	return context.WithValue(ctx, slotKey{}, s)
}

func slotOf(ctx context.Context) *slot {
	s, _ := ctx.Value(slotKey{}).(*slot)
	return s
}

// newSlot takes the kept params of p; nil when p was not tagged.
func (t *tags) newSlot(method string, p mcp.Params) *slot {
	raw, ok := t.take(p)
	if !ok {
		return nil
	}
	return &slot{method: method, raw: raw}
}

// claim reports whether a message of method written under s is the one
// s carries (the first such), and marks it sent.
func (s *slot) claim(method string) bool {
	if s == nil || s.method != method {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sent {
		return false
	}
	s.sent = true
	return true
}

func (s *slot) answer(result json.RawMessage, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answered = true
	s.result = append(json.RawMessage(nil), result...)
	if err != nil {
		we, ok := err.(*jsonrpc.Error)
		if !ok {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		s.err = we
	}
}

// reply is what the middleware returns for a call made under s: the other
// side's answer as it came when there was one, else what the SDK made of
// it (the call failed before an answer: a cancellation, a closed link).
func (s *slot) reply(res mcp.Result, err error) (mcp.Result, error) {
	if s == nil {
		return res, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.answered {
		if s.forget != nil {
			s.forget()
		}
		return res, err
	}
	if s.err != nil {
		return nil, s.err
	}
	return &rawResult{raw: s.result, typed: res}, nil
}

// rawResult is a result encoded as it came from the other side.
type rawResult struct {
	mcp.ResultBase
	raw   json.RawMessage
	typed mcp.Result
}

func (r *rawResult) MarshalJSON() ([]byte, error) { return r.raw, nil }

// RawJSON is the result as it came (mcpserve records a call's result from
// it).
func (r *rawResult) RawJSON() json.RawMessage { return r.raw }

// conn is one side's connection: requests and notifications read are
// tagged; a message written under a slot carries the slot's params, and
// the answer to it fills the slot.
type conn struct {
	mcp.Connection
	tags *tags

	mu      sync.Mutex
	pending map[jsonrpc.ID]*slot
}

func (c *conn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err != nil {
		return msg, err
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		return c.tags.tag(m), nil
	case *jsonrpc.Response:
		c.mu.Lock()
		s := c.pending[m.ID]
		delete(c.pending, m.ID)
		c.mu.Unlock()
		if s != nil {
			s.answer(m.Result, m.Error)
		}
	}
	return msg, nil
}

func (c *conn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok {
		if s := slotOf(ctx); s.claim(r.Method) {
			out := *r
			out.Params = s.raw.params
			msg = &out
			if r.IsCall() {
				c.mu.Lock()
				c.pending[r.ID] = s
				c.mu.Unlock()
				s.mu.Lock()
				s.forget = func() { c.mu.Lock(); delete(c.pending, r.ID); c.mu.Unlock() }
				s.mu.Unlock()
			}
		}
	}
	return c.Connection.Write(ctx, msg)
}

// transport wraps t's connections in conns sharing tags.
type transport struct {
	mcp.Transport
	tags *tags
}

func (t *transport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &conn{Connection: c, tags: t.tags, pending: map[jsonrpc.ID]*slot{}}, nil
}

// Transport returns t, a transport a client session of the proxy's
// Server comes over (stdio, in memory), with what passes kept byte for
// byte both ways.
func (p *Proxy) Transport(t mcp.Transport) mcp.Transport {
	return &transport{Transport: t, tags: &p.tags}
}

// maxTagged bounds the POST bodies WatchHTTP rewrites; a larger one goes
// on as it is (its messages pass as the SDK encodes them).
const maxTagged = 4 << 20

// WatchHTTP returns h with the requests and notifications of every POST
// body tagged, so their params reach the upstream as the client sent
// them. Over HTTP the SDK's transport owns the connection: the upstream's
// answers to the client's requests pass byte for byte, and what the
// upstream sends of its own (notifications, sampling, elicitation) passes
// as the SDK encodes it.
func (p *Proxy) WatchHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxTagged+1))
			if err == nil && len(body) <= maxTagged {
				if b, ok := p.tags.tagBody(body); ok {
					r.Body.Close()
					r.Body = io.NopCloser(bytes.NewReader(b))
					r.ContentLength = int64(len(b))
					h.ServeHTTP(w, r)
					return
				}
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		}
		h.ServeHTTP(w, r)
	})
}

// tagBody tags the requests of one message or a batch; false leaves the
// body as it was (not JSON-RPC, or nothing to tag).
func (t *tags) tagBody(body []byte) ([]byte, bool) {
	trimmed := bytes.TrimSpace(body)
	batch := len(trimmed) > 0 && trimmed[0] == '['
	var raws []json.RawMessage
	if batch {
		if json.Unmarshal(trimmed, &raws) != nil {
			return nil, false
		}
	} else {
		raws = []json.RawMessage{trimmed}
	}
	changed := false
	out := make([]json.RawMessage, len(raws))
	for i, raw := range raws {
		out[i] = raw
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			continue
		}
		tagged := t.tag(req)
		if tagged == req {
			continue
		}
		b, err := jsonrpc.EncodeMessage(tagged)
		if err != nil {
			continue
		}
		out[i], changed = b, true
	}
	if !changed {
		return nil, false
	}
	if !batch {
		return out[0], true
	}
	b, err := marshal(out)
	return b, err == nil
}

// marshal encodes v leaving <, > and & as they are (encoding/json would
// escape them even inside a json.RawMessage).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
