// Package mcp offers the tools of MCP servers as tool.Tool values, through
// the official go-sdk client.
//
// # Configuration
//
// A ServerConfig is one server: a command (stdio) or a URL (streamable
// HTTP, or the older SSE transport), with ${VAR} references expanded only
// when the server is connected (an unset variable stops that server). The
// caller builds them from config.toml's [mcp.servers.NAME] tables or reads
// them from a .mcp.json file with LoadFile; Merge joins the sources and
// refuses a name defined twice.
//
// # Names
//
// A server's tool t is offered as mcp__<server>__<t> (ToolName), each part
// sanitised to [A-Za-z0-9_-] and the whole cut to 64 bytes, the providers'
// limit. Two tools that end up with one name are an error naming both.
// ExpandNames turns mcp__<server> into all of that server's tools, for
// --tool.
//
// # Capabilities
//
// An MCP tool declares every capability unless its server's config
// narrows them; with TrustAnnotations the tool's readOnlyHint rules out
// modifying the workspace and running commands, and openWorldHint=false
// rules out the network and outside results. The permission gate and the
// taint tracker read these like any tool's.
//
// # Lifecycle
//
// Start connects every enabled server in parallel, each within its
// startup timeout (initialize and tools/list included); a server that
// fails has its Err set and the others go on. A stdio server runs in a
// process group of its own, with its stderr appended to
// <LogDir>/mcp-<server>.log. A call has its server's tool timeout; a
// cancelled context cancels it and the SDK tells the server. A server that
// died turns its calls into error results at once. Close ends every
// server: stdin closed, then SIGTERM to its process group, then SIGKILL,
// and returns when none is left.
//
// # Results
//
// MapResult turns a tools/call result into text: text blocks as they are,
// images and audio as one-line placeholders with their MIME type and size,
// structured content as JSON (unless a text block holds the same value),
// isError as an error result, all cleared of Options.Secrets (and their
// encoded forms) and then cut like the built-ins' results.
//
// mcptest holds the small server the tests run, in memory or as a process.
package mcpclient
