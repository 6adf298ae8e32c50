// Package mcpproxytest is a small MCP server for tests of the proxy and of
// the commands that use it: the tests' upstream, in memory or as the
// "mcpupstream" command of a test binary (over stdio).
package mcpproxytest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name and Version are the upstream's serverInfo.
const (
	Name    = "mcpupstream"
	Version = "1.2.3"
)

// NewUpstream returns the test server: tools echo (with a progress
// notification and a log message when asked for progress), fail (an error
// result), slow (sleeps ms milliseconds, or until cancelled); a resource
// mem://greeting; a prompt greet.
// Cancelled counts the slow calls that ended because they were cancelled:
// what a test reads to know a cancellation reached the upstream.
var Cancelled atomic.Int64

func NewUpstream() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: Name, Version: Version}, &mcp.ServerOptions{Instructions: "test upstream"})
	obj := func(props string) json.RawMessage {
		return json.RawMessage(`{"type":"object","properties":` + props + `}`)
	}
	s.AddTool(&mcp.Tool{Name: "echo", Description: "Echo the text.", InputSchema: obj(`{"text":{"type":"string"}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ Text string }
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return nil, err
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1, Total: 2, Message: "half"})
				req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "echoing " + in.Text})
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil
		})
	s.AddTool(&mcp.Tool{Name: "fail", Description: "Fail.", InputSchema: obj(`{}`)},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}, IsError: true}, nil
		})
	s.AddTool(&mcp.Tool{Name: "slow", Description: "Sleep.", InputSchema: obj(`{"ms":{"type":"integer"}}`)},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var in struct{ MS int }
			json.Unmarshal(req.Params.Arguments, &in)
			select {
			case <-time.After(time.Duration(in.MS) * time.Millisecond):
			case <-ctx.Done():
				Cancelled.Add(1)
				return nil, ctx.Err()
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("slept %d ms", in.MS)}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "greeting", URI: "mem://greeting", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greet someone."},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		})
	return s
}

// Main serves the upstream on stdin and stdout until stdin closes.
func Main(args []string) int {
	if err := NewUpstream().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "mcpupstream:", err)
		return 1
	}
	return 0
}
