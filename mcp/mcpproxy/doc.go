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
// # Byte for byte
//
// The SDK's structs route messages; they do not carry them. Each request
// and notification read from either side is tagged and its params kept as
// they came, and the proxy's middleware has the other side's connection
// write those params in place of the SDK's encoding; the answer's result
// or error is kept as it came and is what the proxy answers (raw.go).
// Fields no SDK knows, _meta, key order and the upstream's error codes
// and data all pass. Over stdio, on both sides (Transport for the client's,
// and the upstream's command), this holds both ways for everything. Where
// a side speaks streamable HTTP the SDK's transport owns that connection
// (the client's: WatchHTTP rewrites the bodies it reads; the upstream's:
// HTTPClient posts the kept params and reads the answers out of the
// bodies), so the client's requests and the upstream's answers pass byte
// for byte, while what the upstream sends of its own (notifications,
// sampling, elicitation, roots) and the client's answers to it pass as
// the SDK encodes them. The tasks methods of 2025-11-25
// (tasks/get, tasks/result, tasks/list, tasks/cancel), which the SDK does
// not know, are forwarded as they are; other methods it does not know are
// refused by its session, as a server built on it would refuse them.
//
// The upstream is connected when the client initializes, with the client's
// initialize params as sent, so the upstream sees the client as it would
// directly; the initialize answer is the upstream's own (protocol version,
// serverInfo, capabilities, instructions), so the client gets the newest
// version the upstream offers it, and cannot tell the proxy is there.
//
// The proxy offers the handshake-era protocol versions only (2025-11-25
// and older): a client that tries server/discover first, as the go-sdk's
// does, falls back to initialize, which the proxy needs to learn whom it
// serves and to connect the upstream.
//
// Not forwarded: notifications/roots/list_changed from the client (the
// SDK's client sends it only when its own roots change) and the
// sessionless protocol's subscriptions/listen.
package mcpproxy
