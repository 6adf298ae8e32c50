package mcpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/engine/tool"
)

// Tool is one tool of a connected server, as a tool.Tool.
type Tool struct {
	server *Server
	remote string // the server's name for it
	name   string // the name offered: mcp__<server>__<tool>
	spec   tool.Spec
	caps   tool.Capabilities
}

var _ tool.Tool = (*Tool)(nil)

func newTool(s *Server, lt *mcp.Tool) (*Tool, error) {
	schema, err := json.Marshal(lt.InputSchema)
	if err != nil || lt.InputSchema == nil {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	name := ToolName(s.cfg.Name, lt.Name)
	return &Tool{server: s, remote: lt.Name, name: name,
		spec: tool.Spec{Name: name, Description: lt.Description, InputSchema: schema},
		caps: capabilities(s.cfg, lt.Name, lt.Annotations)}, nil
}

// capabilities is what the server's tool remote declares: everything,
// unless the config narrows it (the tool's own entry in
// ToolCapabilities, else the server's Capabilities), and then, with
// trust_annotations, less what the tool's annotations rule out.
// readOnlyHint rules out modifying the workspace, running commands and
// acting outward (a tool that modifies nothing takes no action);
// openWorldHint=false rules out reaching the network, acting outward and
// outside results (the tool deals with no one outside).
// Reading the workspace is never ruled out: nothing in the protocol says a
// tool does not.
func capabilities(c ServerConfig, remote string, a *mcp.ToolAnnotations) tool.Capabilities {
	caps := tool.Capabilities{ReadsWorkspace: true, ModifiesWorkspace: true, RunsCommands: true, ReachesNetwork: true,
		ActsOutward: true, External: true}
	if tc, ok := c.ToolCapabilities[remote]; ok {
		caps = tc
	} else if c.Capabilities != nil {
		caps = *c.Capabilities
	}
	if !c.TrustAnnotations || a == nil {
		return caps
	}
	if a.ReadOnlyHint {
		caps.ModifiesWorkspace, caps.RunsCommands, caps.ActsOutward = false, false, false
	}
	if a.OpenWorldHint != nil && !*a.OpenWorldHint {
		caps.ReachesNetwork, caps.ActsOutward, caps.External = false, false, false
	}
	return caps
}

// Spec is the server's description and input schema under mecha's name.
func (t *Tool) Spec() tool.Spec { return t.spec }

// Capabilities are what the tool declares (see capabilities).
func (t *Tool) Capabilities() tool.Capabilities { return t.caps }

// Server is the name of the tool's server.
func (t *Tool) Server() string { return t.server.cfg.Name }

// Remote is the server's own name for the tool.
func (t *Tool) Remote() string { return t.remote }

// Run calls the tool within the server's tool timeout. A cancelled ctx
// cancels the call (the server is told); a timeout, a server that is
// gone and a protocol error are error results the model reads.
func (t *Tool) Run(ctx context.Context, input json.RawMessage) (tool.Result, error) {
	if len(bytes.TrimSpace(input)) == 0 {
		input = json.RawMessage("{}")
	}
	timeout := t.server.cfg.toolTimeout()
	callCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := t.server.session.CallTool(callCtx, &mcp.CallToolParams{Name: t.remote, Arguments: input})
	if err == nil {
		return MapResult(res, t.server.opts.MaxResultBytes, t.server.opts.redactor), nil
	}
	srv := t.server.cfg.Name
	var wire *jsonrpc.Error
	switch {
	case errors.As(err, &wire): // the server answered: it is there
		return tool.Result{Content: fmt.Sprintf("mcp: server %q: %v", srv, err), IsError: true}, nil
	case ctx.Err() != nil:
		return tool.Result{Content: fmt.Sprintf("mcp: the call to server %q was cancelled", srv), IsError: true}, ctx.Err()
	case errors.Is(callCtx.Err(), context.DeadlineExceeded):
		return tool.Result{Content: fmt.Sprintf("mcp: server %q did not answer within %s (tool_timeout_s); the call was cancelled", srv, timeout), IsError: true}, nil
	case errors.Is(err, mcp.ErrConnectionClosed) || t.server.gone(time.Second):
		return tool.Result{Content: fmt.Sprintf("mcp: server %q is gone: %v%s", srv, t.server.exit(err), t.server.logHint()), IsError: true}, nil
	}
	return tool.Result{Content: fmt.Sprintf("mcp: server %q: %v", srv, err), IsError: true}, nil
}

// gone reports whether a stdio server's process has exited, waiting up
// to d for it: a call that failed because the server's stdout ended
// usually returns before the process has been reaped.
func (s *Server) gone(d time.Duration) bool {
	p, ok := s.closer.(*process)
	return ok && p.wait(d)
}

// exit describes how a server went away: its exit status when known.
func (s *Server) exit(err error) string {
	if p, ok := s.closer.(*process); ok {
		if exited, werr := p.Exited(); exited {
			return "it exited (" + exitText(werr) + ")"
		}
	}
	return err.Error()
}
