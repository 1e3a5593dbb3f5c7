package core

import (
	"context"

	"github.com/a3s-lab/code-wasm/mcp"
)

// mcpServers is what a session asks of its MCP servers (an *mcp.Servers):
// an interface, so that a build that never makes one links no MCP client.
// A concrete field kept *mcp.Servers' methods, through them the client
// and fetch, in the codewasm_core build (its Remove matched an interface
// method of the same signature): ~47 KB of code (RATIONALE.md, size).
type mcpServers interface {
	Add(context.Context, mcp.Config) (mcp.Status, error)
	Status() []mcp.Status
	Remove(context.Context, string) error
}

// AddMcp connects an MCP server and registers its tools as
// mcp__<name>__<tool>; every call goes through the kernel like any tool.
// The status lists the tools left out (Warnings). A server that cannot be
// reached registers nothing and stays in McpStatus with its error.
func (s *Session) AddMcp(ctx context.Context, cfg mcp.Config) (mcp.Status, error) {
	return s.mcp.Add(ctx, cfg)
}

// McpStatus lists the MCP servers, sorted by name.
func (s *Session) McpStatus() []mcp.Status { return s.mcp.Status() }

// RemoveMcp unregisters a server's tools and ends its MCP session.
func (s *Session) RemoveMcp(ctx context.Context, name string) error {
	return s.mcp.Remove(ctx, name)
}
