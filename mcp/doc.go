// Package mcp is the Model Context Protocol client of a session: a
// Streamable HTTP client over internal/fetch (JSON-RPC POSTs answered as
// JSON or SSE, Mcp-Session-Id, nextCursor paging, notifications/cancelled
// on abort, DELETE on removal) and the adapter that registers each server
// tool as a kernel tool named mcp__<server>__<tool>.
package mcp
