//go:build !codewasm_core

package hostapi

import (
	"github.com/a3s-lab/code-wasm/errkind"
	"github.com/a3s-lab/code-wasm/mcp"
)

// CodeMcpFailed: addMcp could not connect to the server or list its tools
// (it shows in mcpStatus with the error; nothing was registered).
const CodeMcpFailed = "MCP_FAILED"

// mcpMethods connect, list and remove MCP servers.
var mcpMethods = []row{
	method("addMcp", 0, func(c *call, a *mcp.Config) (any, error) {
		st, err := c.e.s.AddMcp(c.ctx, *a)
		return st, mcpErr(c, err)
	}),
	method("mcpStatus", syncCall, func(c *call, _ *noArgs) (any, error) { return c.e.s.McpStatus(), nil }),
	method("removeMcp", 0, func(c *call, a *struct {
		Name *string `json:"name" required:"true"`
	}) (any, error) {
		return nil, mcpErr(c, c.e.s.RemoveMcp(c.ctx, *a.Name))
	}),
}

func mcpErr(c *call, err error) error {
	switch {
	case err == nil:
		return nil
	case c.ctx.Err() != nil:
		return errf(CodeAborted, "%s: the call was aborted", c.method)
	case errkind.Is(err, errkind.InvalidArgument), errkind.Is(err, errkind.NotFound):
		return errf(CodeInvalidCall, "%v", err)
	}
	return errf(CodeMcpFailed, "%s: %v", c.method, err)
}
