// Package mcpserve offers mecha's tools to any MCP client (Claude Code,
// Codex, Cursor, the inspector) and records every tools/call made against
// them, as it runs: a tool_call_start record when it arrives, a tool_call
// record when it is answered, so a server killed while a call runs leaves
// that call on the record with no result.
//
// The pieces are small and meant to be put together by a command:
//
//   - NewServer turns a tool.Registry into a go-sdk *mcp.Server whose tools
//     are the registry's (already confined and gated by the caller);
//   - Recorder writes a session: created when the client has initialized
//     (the meta names the client), a config record, then per call a
//     tool_call_start (Arrived, which numbers the calls) and a tool_call
//     of the same number (Record). Recording is best-effort: a failed write never fails a call,
//     but it is reported once on the Recorder's Warn writer, and at Close
//     the session is told, when its file takes it, that recording stopped;
//   - Middleware is the seam: go-sdk receiving middleware that times each
//     tools/call and hands it to the Recorder, and reports the client's
//     initialize. A ServerSession cannot be wrapped, but its middleware sees
//     every request, which is why the proxy (package mcpproxy) uses the same
//     middleware in front of an upstream;
//   - IDs recovers the JSON-RPC id of each call, which the SDK does not hand
//     to middleware: WatchTransport (stdio) and WatchHTTP (streamable HTTP)
//     note each tools/call request as it is read, and the middleware takes
//     the id of the oldest call of the same tool and arguments.
package mcpserve
