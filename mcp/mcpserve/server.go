package mcpserve

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mecha-agent/mecha/engine/tool"
)

// Implementation is how mecha names itself to MCP clients.
func Implementation(version string) *mcp.Implementation {
	return &mcp.Implementation{Name: "mecha", Title: "mecha's built-in tools", Version: version}
}

// NewServer returns an MCP server offering the registry's tools, in
// registry order, each as the model would be offered it (name,
// description, input schema). A call runs the tool as a run would: the
// registry's tools are expected to be confined and gated already. A
// harness error comes back as an error result, as a model would see it.
func NewServer(impl *mcp.Implementation, reg *tool.Registry, opts *mcp.ServerOptions) *mcp.Server {
	s := mcp.NewServer(impl, opts)
	for _, t := range reg.Tools() {
		spec := t.Spec()
		schema := spec.InputSchema
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		s.AddTool(&mcp.Tool{Name: spec.Name, Description: spec.Description, InputSchema: schema, Annotations: annotations(t.Capabilities())}, handler(t))
	}
	return s
}

func handler(t tool.Tool) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		res, err := t.Run(ctx, req.Params.Arguments)
		if err != nil {
			res = tool.Result{Content: err.Error(), IsError: true}
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res.Content}}, IsError: res.IsError}, nil
	}
}

// annotations tells a client what the tool can do, from the capabilities
// it declares (the widest thing it can do).
func annotations(c tool.Capabilities) *mcp.ToolAnnotations {
	readOnly := !c.ModifiesWorkspace && !c.RunsCommands && !c.ActsOutward
	destructive := c.ModifiesWorkspace || c.RunsCommands
	open := c.ReachesNetwork || c.ActsOutward || c.External || c.RunsCommands
	return &mcp.ToolAnnotations{ReadOnlyHint: readOnly, DestructiveHint: &destructive, OpenWorldHint: &open}
}
