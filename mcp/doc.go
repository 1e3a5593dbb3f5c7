// Package mcp connects a session to MCP servers over Streamable HTTP and
// adapts their tools to kernel tools.
//
// Client is a hand-written JSON-RPC client (protocol 2025-11-25; older
// servers' 2025-06-18 and 2025-03-26 answers are accepted) over the one
// HTTP seam, internal/fetch, so net/http never enters the wasm: replies as
// JSON or SSE, Mcp-Session-Id kept, nextCursor pages followed,
// notifications/cancelled sent when a call is aborted, a lost session
// re-initialised once. Servers registers each listed tool as
// mcp__<server>__<tool> (ToolName) in a session's registry, so every MCP
// call goes through the kernel like any other tool; Status reports each
// server's state for mcpStatus.
package mcp
