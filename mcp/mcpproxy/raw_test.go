package mcpproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/mcp/mcpproxy"
	"github.com/mecha-agent/mecha/mcp/mcpserve"
	"github.com/mecha-agent/mecha/record/session"
	"github.com/mecha-agent/mecha/record/transcript"
)

// A fake upstream that speaks JSON-RPC with fields no SDK knows and _meta
// everywhere, in an order no encoder would choose, and a client that does
// the same: through the proxy each side receives the other's params and
// results byte for byte (compacted: transports compact what they carry).

var fakeResults = map[string]string{
	"initialize":               `{"serverInfo":{"version":"1","name":"fake","x-extra":1},"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true},"resources":{},"prompts":{},"x-future":{"a":[1]}},"_meta":{"m":1},"x-unknown":true}`,
	"tools/list":               `{"tools":[{"name":"t","inputSchema":{"type":"object"},"execution":{"taskSupport":"optional"},"_meta":{"k":"v"},"x-new":[1,2]}],"_meta":{"page":1},"x-more":"yes"}`,
	"tools/call":               `{"isError":false,"content":[{"type":"text","text":"hi <&>","_meta":{"c":1},"x-annot":2},{"type":"x-future-kind","blob":"?"}],"_meta":{"r":1},"x-res":{"deep":[null]}}`,
	"resources/list":           `{"resources":[{"uri":"mem://a","name":"a","x-size":3,"_meta":{"rm":1}}],"x-l":1}`,
	"resources/templates/list": `{"resourceTemplates":[{"uriTemplate":"mem://{x}","name":"x","x-t":1}],"_meta":{}}`,
	"resources/read":           `{"contents":[{"uri":"mem://a","text":"abc","x-c":1,"_meta":{"rc":1}}],"x-r":1}`,
	"prompts/list":             `{"prompts":[{"name":"p","x-p":1,"arguments":[{"name":"a","x-a":1}]}],"_meta":{"pl":1}}`,
	"prompts/get":              `{"messages":[{"role":"user","content":{"type":"text","text":"p","x-pc":1},"x-m":1}],"description":"d","x-g":1}`,
	"tasks/get":                `{"taskId":"1","status":"working","x-task":1}`,
}

// The client's params, with fields no SDK knows.
var clientParams = map[string]string{
	"initialize":               `{"protocolVersion":"2025-11-25","clientInfo":{"version":"0","name":"raw","x-ci":1},"capabilities":{"roots":{},"x-cap":{}},"_meta":{"cm":1},"x-init":"yes"}`,
	"tools/list":               `{"_meta":{"lm":1},"x-list":true}`,
	"tools/call":               `{"name":"t","arguments":{"b":1,"a":"<&>"},"_meta":{"progressToken":"tok","x":1},"x-param":true,"task":{"ttl":1000}}`,
	"resources/list":           `{"x-rl":1}`,
	"resources/templates/list": `{"_meta":{"z":0}}`,
	"resources/read":           `{"uri":"mem://a","x-rr":1}`,
	"prompts/list":             `{"cursor":"","x-pl":1}`,
	"prompts/get":              `{"name":"p","arguments":{"a":"1"},"x-pg":1}`,
	"tasks/get":                `{"taskId":"1","_meta":{"tm":1}}`,
}

// What the upstream sends of its own during the call, and the client's
// answer to its request.
const (
	progressParams = `{"progressToken":"tok","progress":1,"total":2,"message":"half","x-prog":1,"_meta":{"pm":1}}`
	rootsParams    = `{"_meta":{"rq":1},"x-roots":1}`
	rootsResult    = `{"roots":[{"uri":"file:///x","name":"x","x-r":1}],"_meta":{"q":1},"x-rr":1}`
)

func compact(t *testing.T, b []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return buf.String()
}

// fakeUpstream answers on c until it closes, noting the params of what
// it reads by method.
type fakeUpstream struct {
	c   mcp.Connection
	mu  sync.Mutex
	got map[string]string
}

func (f *fakeUpstream) note(k string, v json.RawMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.got[k]; !ok { // the first of each
		f.got[k] = string(v)
	}
}

func (f *fakeUpstream) serve(t *testing.T) {
	ctx := context.Background()
	rootsID, _ := jsonrpc.MakeID("roots-1")
	var pendingCall *jsonrpc.Request
	for {
		msg, err := f.c.Read(ctx)
		if err != nil {
			return
		}
		switch m := msg.(type) {
		case *jsonrpc.Response:
			f.note("roots/list result", m.Result)
			if pendingCall != nil {
				f.c.Write(ctx, &jsonrpc.Response{ID: pendingCall.ID, Result: json.RawMessage(fakeResults["tools/call"])})
				pendingCall = nil
			}
		case *jsonrpc.Request:
			f.note(m.Method, m.Params)
			if !m.IsCall() {
				continue
			}
			if m.Method == "tools/call" {
				var p struct{ Name string }
				json.Unmarshal(m.Params, &p)
				if p.Name == "bad" {
					f.c.Write(ctx, &jsonrpc.Response{ID: m.ID, Error: &jsonrpc.Error{Code: -32001, Message: "nope", Data: json.RawMessage(`{"why":"x","x":[1]}`)}})
					continue
				}
				// A progress notification and a request of the client
				// first; the answer once the client answers.
				f.c.Write(ctx, &jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(progressParams)})
				f.c.Write(ctx, &jsonrpc.Request{ID: rootsID, Method: "roots/list", Params: json.RawMessage(rootsParams)})
				pendingCall = m
				continue
			}
			res, ok := fakeResults[m.Method]
			if !ok {
				res = `{}`
			}
			f.c.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(res)})
		}
	}
}

// TestUnknownFieldsPassBothWays: every params and result, of requests,
// answers and notifications both ways, reaches the other side as it was
// sent, fields no SDK knows and _meta included; an upstream's error too.
func TestUnknownFieldsPassBothWays(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	up := &fakeUpstream{got: map[string]string{}}
	dir := t.TempDir()
	rec := &mcpserve.Recorder{Store: &session.Store{Dir: dir}, Meta: transcript.Meta{Provider: "mcp"}}
	ids := &mcpserve.IDs{}
	p := mcpproxy.New(mcpproxy.Options{
		Connect: func(context.Context) (mcp.Transport, error) {
			st, ct := mcp.NewInMemoryTransports()
			c, err := st.Connect(ctx)
			if err != nil {
				return nil, err
			}
			up.c = c
			go up.serve(t)
			return ct, nil
		},
		Recorder: rec, IDs: ids,
	})
	defer p.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, ids.WatchTransport(p.Transport(st)), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	n := 0
	// ask sends a request and returns its answer, answering roots/list
	// and noting the progress notification on the way.
	var progress, rootsReq string
	ask := func(method, params string) *jsonrpc.Response {
		t.Helper()
		n++
		id, _ := jsonrpc.MakeID(float64(n))
		if err := c.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(params)}); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		for {
			msg, err := c.Read(rctx)
			if err != nil {
				t.Fatalf("%s: %v", method, err)
			}
			switch m := msg.(type) {
			case *jsonrpc.Response:
				if m.ID == id {
					return m
				}
			case *jsonrpc.Request:
				switch m.Method {
				case "notifications/progress":
					progress = string(m.Params)
				case "roots/list":
					rootsReq = string(m.Params)
					c.Write(ctx, &jsonrpc.Response{ID: m.ID, Result: json.RawMessage(rootsResult)})
				}
			}
		}
	}
	for _, method := range []string{"initialize", "tools/list", "tools/call", "resources/list", "resources/templates/list", "resources/read", "prompts/list", "prompts/get", "tasks/get"} {
		r := ask(method, clientParams[method])
		if r.Error != nil {
			t.Errorf("%s: error %v", method, r.Error)
			continue
		}
		if got, want := compact(t, r.Result), compact(t, []byte(fakeResults[method])); got != want {
			t.Errorf("%s: the client got\n%s\nthe upstream sent\n%s", method, got, want)
		}
		if method == "initialize" {
			c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"})
		}
	}
	r := ask("tools/call", `{"name":"bad","arguments":{}}`)
	if we, ok := r.Error.(*jsonrpc.Error); !ok || we.Code != -32001 || we.Message != "nope" || compact(t, we.Data) != `{"why":"x","x":[1]}` {
		t.Errorf("the upstream's error reached the client as %#v", r.Error)
	}
	up.mu.Lock()
	for method, want := range clientParams {
		if got := up.got[method]; compact(t, []byte(got)) != compact(t, []byte(want)) {
			t.Errorf("%s: the upstream got\n%s\nthe client sent\n%s", method, got, want)
		}
	}
	if got := up.got["roots/list result"]; compact(t, []byte(got)) != rootsResult {
		t.Errorf("roots/list: the upstream got\n%s\nthe client answered\n%s", got, rootsResult)
	}
	up.mu.Unlock()
	if compact(t, []byte(progress)) != progressParams {
		t.Errorf("progress: the client got\n%s\nthe upstream sent\n%s", progress, progressParams)
	}
	if compact(t, []byte(rootsReq)) != rootsParams {
		t.Errorf("roots/list: the client got\n%s\nthe upstream sent\n%s", rootsReq, rootsParams)
	}

	// The call is recorded as it came: its unknown content kind included.
	c.Close()
	rec.Close()
	l, err := rec.Store.Load(session.Ref{Dir: dir, ID: rec.ID()})
	if err != nil {
		t.Fatal(err)
	}
	var calls []*transcript.ToolCall
	for _, r := range l.Records {
		if tc, ok := r.(*transcript.ToolCall); ok {
			calls = append(calls, tc)
		}
	}
	if len(calls) != 2 || string(calls[0].Content) != `[{"type":"text","text":"hi <&>","_meta":{"c":1},"x-annot":2},{"type":"x-future-kind","blob":"?"}]` ||
		calls[1].Error == "" {
		t.Fatalf("recorded %+v", calls)
	}
	if l.Meta.MCPClient == nil || l.Meta.MCPClient.Name != "raw" || l.Meta.MCPClient.ProtocolVersion != "2025-11-25" {
		t.Fatalf("client %+v", l.Meta.MCPClient)
	}
}

// TestUnknownFieldsPassOverHTTP: an upstream reached over streamable HTTP
// gets the client's params as sent and its answers reach the client as it
// sent them, through the proxy's HTTP client.
func TestUnknownFieldsPassOverHTTP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var mu sync.Mutex
	got := map[string]string{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		msg, err := jsonrpc.DecodeMessage(body)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		mu.Lock()
		if _, seen := got[req.Method]; !seen {
			got[req.Method] = string(req.Params)
		}
		mu.Unlock()
		if !req.IsCall() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		res := fakeResults[req.Method]
		if res == "" {
			res = `{}`
		}
		b, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage(res)})
		if req.Method == "tools/list" { // one answer as an event stream
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprintf(w, "event: message\ndata: %s\n\n", b)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	defer srv.Close()
	var p *mcpproxy.Proxy
	p = mcpproxy.New(mcpproxy.Options{
		Connect: func(context.Context) (mcp.Transport, error) {
			return &mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: p.HTTPClient(srv.Client()), DisableStandaloneSSE: true}, nil
		},
	})
	defer p.Close()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := p.Server().Connect(ctx, p.Transport(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c, err := ct.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	methods := []string{"initialize", "tools/list", "resources/read", "prompts/get"}
	for i, method := range methods {
		id, _ := jsonrpc.MakeID(float64(i + 1))
		if err := c.Write(ctx, &jsonrpc.Request{ID: id, Method: method, Params: json.RawMessage(clientParams[method])}); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		for {
			msg, err := c.Read(rctx)
			if err != nil {
				cancel()
				t.Fatalf("%s: %v", method, err)
			}
			if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id {
				if r.Error != nil || compact(t, r.Result) != compact(t, []byte(fakeResults[method])) {
					t.Errorf("%s: the client got %s (%v), the upstream sent %s", method, r.Result, r.Error, fakeResults[method])
				}
				break
			}
		}
		cancel()
		if method == "initialize" {
			c.Write(ctx, &jsonrpc.Request{Method: "notifications/initialized"})
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, method := range methods {
		if compact(t, []byte(got[method])) != compact(t, []byte(clientParams[method])) {
			t.Errorf("%s: the upstream got %s, the client sent %s", method, got[method], clientParams[method])
		}
	}
}
