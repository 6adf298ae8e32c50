package mcpproxy

import (
	"context"
	"reflect"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// forward is the server's receiving middleware: it answers each request of
// the client by making it of the upstream.
func (l *link) forward(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		params := req.GetParams()
		s := l.p.tags.newSlot(method, params)
		if method == "initialize" {
			return l.initialize(ctx, s, next, method, req)
		}
		if !strings.HasPrefix(method, "notifications/") {
			defer l.track(ctx, params)()
		}
		switch method {
		case "ping", "notifications/initialized", "notifications/cancelled":
			// Answered here; a cancellation cancels ctx, which the SDK
			// passes on to the upstream call.
			return next(ctx, method, req)
		}
		up, err := l.upstream()
		if err != nil {
			return nil, err
		}
		return s.reply(l.call(withSlot(ctx, s), up, next, method, req))
	}
}

// call makes the client's request of the upstream (ctx carries its slot).
func (l *link) call(ctx context.Context, up *mcp.ClientSession, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	switch p := req.GetParams().(type) {
	case *mcp.ListToolsParams:
		return up.ListTools(ctx, p)
	case *mcp.CallToolParamsRaw:
		cp := &mcp.CallToolParams{Meta: p.Meta, Name: p.Name, Arguments: p.Arguments}
		if len(p.Arguments) == 0 {
			cp.Arguments = nil
		}
		return up.CallTool(ctx, cp)
	case *mcp.ListResourcesParams:
		return up.ListResources(ctx, p)
	case *mcp.ListResourceTemplatesParams:
		return up.ListResourceTemplates(ctx, p)
	case *mcp.ReadResourceParams:
		return up.ReadResource(ctx, p)
	case *mcp.ListPromptsParams:
		return up.ListPrompts(ctx, p)
	case *mcp.GetPromptParams:
		return up.GetPrompt(ctx, p)
	case *mcp.CompleteParams:
		return up.Complete(ctx, p)
	case *mcp.SubscribeParams:
		if err := up.Subscribe(ctx, p); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	case *mcp.UnsubscribeParams:
		if err := up.Unsubscribe(ctx, p); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	case *mcp.SetLoggingLevelParams:
		if err := up.SetLoggingLevel(ctx, p); err != nil {
			return nil, err
		}
		return next(ctx, method, req)
	case *mcp.ProgressNotificationParams:
		return nil, up.NotifyProgress(ctx, p)
	case *passParams:
		return mcp.CallCustomMethod[*passParams, *passResult](ctx, up, method, p)
	}
	return next(ctx, method, req)
}

// initialize lets the SDK's session initialize (it keeps the client's
// parameters), connects the upstream as that client, and answers with the
// upstream's identity, capabilities and instructions.
func (l *link) initialize(ctx context.Context, s *slot, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	ir, ok := req.(*mcp.ServerRequest[*mcp.InitializeParams])
	if !ok {
		return next(ctx, method, req)
	}
	up, err := l.connect(ctx, s, ir.Session, ir.Params)
	if err != nil {
		return nil, err
	}
	res, err := next(ctx, method, req)
	if err != nil {
		return nil, err
	}
	if s != nil && s.answered {
		// The upstream's own answer: its protocol version, serverInfo,
		// capabilities, instructions and whatever else it says.
		return s.reply(res, nil)
	}
	if r, ok := res.(*mcp.InitializeResult); ok && r != nil {
		out := *r
		out.Capabilities = up.Capabilities
		out.Instructions = up.Instructions
		out.ServerInfo = up.ServerInfo
		return &out, nil
	}
	return res, nil
}

// back is the upstream client's receiving middleware: what the upstream
// sends goes to the client session.
func (l *link) back(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		s := l.p.tags.newSlot(method, req.GetParams())
		l.mu.Lock()
		down := l.down
		l.mu.Unlock()
		if down == nil {
			// Before the link is made (server-everything sends list_changed
			// before it answers initialize) there is nobody to tell.
			return next(ctx, method, req)
		}
		return s.reply(l.callBack(s, down, next, ctx, method, req))
	}
}

// callBack makes the upstream's request of the client; what it sends
// goes under s (see raw.go).
func (l *link) callBack(s *slot, down *mcp.ServerSession, next mcp.MethodHandler, ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
	switch p := req.GetParams().(type) {
	case *mcp.CreateMessageParams:
		return down.CreateMessage(withSlot(l.requestContext(ctx, p), s), p)
	case *mcp.CreateMessageWithToolsParams:
		return down.CreateMessageWithTools(withSlot(l.requestContext(ctx, p), s), p)
	case *mcp.ElicitParams:
		return down.Elicit(withSlot(l.requestContext(ctx, p), s), p)
	case *mcp.ListRootsParams:
		return down.ListRoots(withSlot(ctx, s), p)
	case *mcp.ProgressNotificationParams:
		return nil, down.NotifyProgress(withSlot(l.tokenContext(ctx, p.ProgressToken), s), p)
	case *mcp.LoggingMessageParams:
		return nil, down.Log(withSlot(l.anyContext(ctx), s), p)
	case *mcp.ResourceUpdatedNotificationParams:
		return nil, l.server.ResourceUpdated(withSlot(ctx, s), p)
	}
	switch method {
	case "notifications/tools/list_changed":
		l.server.AddTool(&mcp.Tool{Name: placeholder, InputSchema: map[string]any{"type": "object"}}, nil)
	case "notifications/prompts/list_changed":
		l.server.AddPrompt(&mcp.Prompt{Name: placeholder}, nil)
	case "notifications/resources/list_changed":
		l.server.AddResource(&mcp.Resource{Name: placeholder, URI: "mecha-proxy:" + placeholder}, nil)
	}
	return next(ctx, method, req)
}

// placeholder names what the proxy adds to its own server only to make the
// SDK send a list_changed notification; every list is the upstream's, so
// no client sees it.
const placeholder = "mecha-proxy-list-changed"

// tokenContext is the context of the client request that carries token,
// so that a notification about it goes where that request's answer goes.
func (l *link) tokenContext(ctx context.Context, token any) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.tokens[normalToken(token)]; ok {
		return c
	}
	return ctx
}

// requestContext is the context of a client request in flight, for a
// request the upstream makes while answering it.
func (l *link) requestContext(ctx context.Context, p mcp.Params) context.Context {
	if rp, ok := p.(mcp.RequestParams); ok && !isNil(rp) {
		if tok := rp.GetProgressToken(); tok != nil {
			return l.tokenContext(ctx, tok)
		}
	}
	return l.anyContext(ctx)
}

// anyContext is the context of the newest client request in flight: the
// upstream's requests and notifications that carry no progress token go
// with its answer (the HTTP transport routes by the context, and a client
// may have no standalone stream open). With no request in flight they go
// out on their own.
func (l *link) anyContext(ctx context.Context) context.Context {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n := len(l.inflight); n > 0 {
		return l.inflight[n-1].ctx
	}
	return ctx
}

// track notes a client request in flight, and its progress token, until
// the returned function is called.
func (l *link) track(ctx context.Context, params mcp.Params) (done func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	e := inflight{seq: l.seq, ctx: ctx}
	l.inflight = append(l.inflight, e)
	var tok any
	if rp, ok := params.(mcp.RequestParams); ok && !isNil(rp) {
		if tok = normalToken(rp.GetProgressToken()); tok != nil {
			l.tokens[tok] = ctx
		}
	}
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, f := range l.inflight {
			if f.seq == e.seq {
				l.inflight = append(l.inflight[:i], l.inflight[i+1:]...)
				break
			}
		}
		if tok != nil {
			delete(l.tokens, tok)
		}
	}
}

type inflight struct {
	seq uint64
	ctx context.Context
}

// normalToken makes a JSON number token compare equal whichever way it
// was decoded.
func normalToken(t any) any {
	switch v := t.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	}
	return t
}

// isNil reports whether p is a nil pointer in an interface: a request
// with no params.
func isNil(p any) bool {
	v := reflect.ValueOf(p)
	return !v.IsValid() || v.Kind() == reflect.Pointer && v.IsNil()
}
