package mcpproxy_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The proxy's cost per call: the same tools/call made directly of the
// upstream and through a recording proxy (two more hops over in-memory
// transports, the forwarding, and one record appended to a session file).
// docs/PERFORMANCE.md has the numbers; compare medians of one run:
//
//	go test ./mcpproxy -run '^$' -bench Call -count 10

func benchCalls(b *testing.B, cs *mcp.ClientSession) {
	ctx := context.Background()
	p := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	for b.Loop() {
		r, err := cs.CallTool(ctx, p)
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}

func BenchmarkCallDirect(b *testing.B) {
	var s seen
	benchCalls(b, direct(b, &s))
}

func BenchmarkCallProxied(b *testing.B) {
	var s seen
	cs, _ := proxied(b, b.TempDir(), &s)
	benchCalls(b, cs)
}

func BenchmarkCallProxiedNoRecording(b *testing.B) {
	var s seen
	cs, _ := proxied(b, "", &s)
	benchCalls(b, cs)
}
