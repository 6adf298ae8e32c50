// Package mcpproxy is a recording MCP proxy: an MCP server that forwards
// everything, both ways, to one upstream server, and records every
// tools/call and its result as a tool_call record of a mecha session
// (through package mcpserve's middleware and Recorder).
//
// # How it forwards
//
// Each client session gets a go-sdk *mcp.Server whose receiving middleware
// answers every request by making the same request of an upstream
// *mcp.ClientSession, and a go-sdk *mcp.Client whose receiving middleware
// hands what the upstream sends (sampling, elicitation and roots requests;
// progress, log and list-changed notifications) back to the client
// session. A ServerSession cannot be wrapped, and a Connection-level pump
// could not route a notification to the HTTP response of the request it
// belongs to; the middleware sees every request with the context the SDK
// routes by.
//
// The upstream is connected when the client initializes, with the client's
// name, capabilities and protocol version, so the upstream sees the client
// much as it would directly. The initialize answer is the upstream's:
// serverInfo, capabilities and instructions pass through unchanged, so a
// client cannot tell the proxy is there.
//
// The proxy offers the handshake-era protocol versions only (2025-11-25
// and older): a client that tries server/discover first, as the go-sdk's
// does, falls back to initialize, which the proxy needs to learn whom it
// serves.
//
// Not forwarded: notifications/roots/list_changed from the client (the
// SDK's client sends it only when its own roots change) and the
// sessionless protocol's subscriptions/listen.
package mcpproxy
