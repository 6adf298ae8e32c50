package mcpserve

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/record/transcript"
)

// Middleware returns go-sdk receiving middleware that starts rec's session
// when a client initializes and records every tools/call as it arrives (a
// tool_call_start record) and again once it is answered (a tool_call
// record). ids, when not nil, supplies the calls'
// JSON-RPC ids. The call's result or error goes back to the client as the
// handler gave it: recording never changes or fails a call.
func Middleware(rec *Recorder, ids *IDs, now func() time.Time) mcp.Middleware {
	if now == nil {
		now = time.Now
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			switch method {
			case "initialize":
				res, err := next(ctx, method, req)
				if err == nil {
					rec.Start(clientOf(req, res))
				}
				return res, err
			case "tools/call":
				if !rec.Started() {
					// A client of the sessionless protocol (2026-07-28 and
					// later) names itself in each request's _meta instead.
					rec.Start(requestClient(req))
				}
				return recordCall(ctx, rec, ids, now, next, method, req)
			}
			return next(ctx, method, req)
		}
	}
}

func clientOf(req mcp.Request, res mcp.Result) transcript.MCPPeer {
	var p transcript.MCPPeer
	if ip, ok := req.GetParams().(*mcp.InitializeParams); ok && ip != nil && ip.ClientInfo != nil {
		p.Name, p.Version = ip.ClientInfo.Name, ip.ClientInfo.Version
	}
	if ir, ok := res.(*mcp.InitializeResult); ok && ir != nil {
		p.ProtocolVersion = ir.ProtocolVersion
	}
	if r, ok := res.(RawResult); ok {
		var ir struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(r.RawJSON(), &ir) == nil {
			p.ProtocolVersion = ir.ProtocolVersion
		}
	}
	return p
}

// RawResult is a result a proxy passes on as it came from its upstream:
// RawJSON is what the client receives.
type RawResult interface {
	mcp.Result
	RawJSON() json.RawMessage
}

// requestClient is the client a request names (in its _meta, or the
// session's initialize).
func requestClient(req mcp.Request) transcript.MCPPeer {
	var p transcript.MCPPeer
	r, ok := req.(interface {
		ClientInfo() *mcp.Implementation
		ProtocolVersion() string
	})
	if !ok {
		return p
	}
	if ci := r.ClientInfo(); ci != nil {
		p.Name, p.Version = ci.Name, ci.Version
	}
	p.ProtocolVersion = r.ProtocolVersion()
	return p
}

func recordCall(ctx context.Context, rec *Recorder, ids *IDs, now func() time.Time, next mcp.MethodHandler, method string, req mcp.Request) (mcp.Result, error) {
	var name string
	var args json.RawMessage
	if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok && p != nil {
		name, args = p.Name, p.Arguments
	}
	id := ids.take(name, args)
	start := now()
	n := 0
	if name != "" {
		// On the record before it runs: a server killed while it runs
		// leaves the call there with no answer.
		n = rec.Arrived(&transcript.ToolCallStart{ID: id, Tool: name, Arguments: cloneRaw(args), StartedAt: start.UTC()})
	}
	res, err := next(ctx, method, req)
	took := now().Sub(start)
	if name == "" {
		return res, err // nothing to name the record by; the SDK refused it
	}
	c := &transcript.ToolCall{
		Call: n, ID: id, Tool: name, Arguments: cloneRaw(args),
		StartedAt: start.UTC(), DurationMS: float64(took.Microseconds()) / 1000,
	}
	switch r := res.(type) {
	case RawResult:
		if err == nil {
			var raw struct {
				Content           json.RawMessage `json:"content"`
				StructuredContent json.RawMessage `json:"structuredContent"`
				IsError           bool            `json:"isError"`
			}
			if json.Unmarshal(r.RawJSON(), &raw) == nil {
				c.IsError = raw.IsError
				// As the typed results below: without the HTML escapes
				// some encoders write, so transcripts stay greppable.
				if len(raw.Content) > 0 {
					c.Content = unescapeHTML(cloneRaw(raw.Content))
				}
				if len(raw.StructuredContent) > 0 && string(raw.StructuredContent) != "null" {
					c.StructuredContent = unescapeHTML(cloneRaw(raw.StructuredContent))
				}
			}
		}
	case *mcp.CallToolResult:
		if err == nil && r != nil {
			c.IsError = r.IsError
			c.Content = marshalOr(r.Content, "[]")
			if r.StructuredContent != nil {
				c.StructuredContent = marshalOr(r.StructuredContent, "null")
			}
		}
	}
	if err != nil {
		c.Error = err.Error()
	} else if c.Content == nil {
		c.Content = json.RawMessage("[]")
	}
	rec.Record(c)
	return res, err
}

func cloneRaw(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	return append(json.RawMessage(nil), b...)
}

// marshalOr encodes v as the client received it, but without escaping
// <, > and & (transcripts stay greppable); or when v does not encode.
func marshalOr(v any, or string) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return json.RawMessage(or)
	}
	return unescapeHTML(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

// unescapeHTML undoes the \u003c, \u003e and \u0026 escapes that the
// SDK's content types write (their MarshalJSON escapes HTML whatever the
// encoder says), leaving every other escape as it is.
func unescapeHTML(b []byte) []byte {
	if !bytes.Contains(b, []byte(`\u00`)) {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 >= len(b) {
			out = append(out, b[i])
			continue
		}
		if b[i+1] == 'u' && i+5 < len(b) {
			switch string(b[i+2 : i+6]) {
			case "003c":
				out, i = append(out, '<'), i+5
				continue
			case "003e":
				out, i = append(out, '>'), i+5
				continue
			case "0026":
				out, i = append(out, '&'), i+5
				continue
			}
		}
		out, i = append(out, b[i], b[i+1]), i+1 // any other escape, whole
	}
	return out
}
