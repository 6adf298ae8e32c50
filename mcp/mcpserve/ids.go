package mcpserve

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

// IDs remembers the JSON-RPC ids of tools/call requests as they are read,
// so that the middleware, which the SDK does not tell the id, can record
// it. A call is matched to the oldest noted call of the same tool and the
// same arguments (byte for byte): two identical calls in flight at once
// may swap ids, which changes nothing else about their records.
type IDs struct {
	mu      sync.Mutex
	pending map[string][]json.RawMessage
}

func callKey(tool string, args json.RawMessage) string {
	return tool + "\x00" + string(args)
}

// note remembers one call's id.
func (ids *IDs) note(id json.RawMessage, tool string, args json.RawMessage) {
	ids.mu.Lock()
	defer ids.mu.Unlock()
	if ids.pending == nil {
		ids.pending = map[string][]json.RawMessage{}
	}
	k := callKey(tool, args)
	ids.pending[k] = append(ids.pending[k], id)
}

// take returns the id of the oldest noted call of tool with args, nil
// when none was noted.
func (ids *IDs) take(tool string, args json.RawMessage) json.RawMessage {
	if ids == nil {
		return nil
	}
	ids.mu.Lock()
	defer ids.mu.Unlock()
	k := callKey(tool, args)
	q := ids.pending[k]
	if len(q) == 0 {
		return nil
	}
	if len(q) == 1 {
		delete(ids.pending, k)
	} else {
		ids.pending[k] = q[1:]
	}
	return q[0]
}

// noteMessage notes msg when it is a tools/call request.
func (ids *IDs) noteMessage(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || req.Method != "tools/call" || !req.IsCall() {
		return
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	id, err := json.Marshal(req.ID.Raw())
	if err != nil {
		return
	}
	ids.note(id, p.Name, p.Arguments)
}

// WatchTransport returns t with every tools/call request it reads noted.
func (ids *IDs) WatchTransport(t mcp.Transport) mcp.Transport {
	return &watchedTransport{Transport: t, ids: ids}
}

type watchedTransport struct {
	mcp.Transport
	ids *IDs
}

func (t *watchedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &watchedConn{Connection: c, ids: t.ids}, nil
}

type watchedConn struct {
	mcp.Connection
	ids *IDs
}

func (c *watchedConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if err == nil {
		c.ids.noteMessage(msg)
	}
	return msg, err
}

// maxPeek bounds the POST bodies WatchHTTP reads ahead of the handler;
// a larger body goes on unread (its calls are recorded with a null id).
const maxPeek = 4 << 20

// WatchHTTP returns h with the tools/call requests of every POST body
// noted before h reads it.
func (ids *IDs) WatchHTTP(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Body != nil {
			body, err := io.ReadAll(io.LimitReader(r.Body, maxPeek+1))
			if err == nil && len(body) <= maxPeek {
				ids.noteBody(body)
			}
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
		}
		h.ServeHTTP(w, r)
	})
}

// noteBody notes the calls of one message or a batch.
func (ids *IDs) noteBody(body []byte) {
	body = bytes.TrimSpace(body)
	var raws []json.RawMessage
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &raws) != nil {
			return
		}
	} else {
		raws = []json.RawMessage{body}
	}
	for _, raw := range raws {
		if msg, err := jsonrpc.DecodeMessage(raw); err == nil {
			ids.noteMessage(msg)
		}
	}
}
