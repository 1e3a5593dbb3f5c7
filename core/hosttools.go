package core

import (
	"fmt"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/tools"
)

// RegisterTool adds a host tool (tools.NewHostTool): it may not shadow a
// built-in or take an mcp__ name; one of the same name is replaced.
func (s *Session) RegisterTool(t kernel.Tool) error {
	if err := tools.CheckHostTool(t.Name(), t.Parameters()); err != nil {
		return err
	}
	if err := s.reg.RegisterDynamic(t); err != nil {
		return fmt.Errorf("registerTool: %w", err)
	}
	return nil
}

// UnregisterTool removes a host tool; it reports whether one was there.
// Built-ins and MCP tools (removeMcp) are not removed.
func (s *Session) UnregisterTool(name string) bool {
	if len(name) > 5 && name[:5] == "mcp__" {
		return false
	}
	return s.reg.Unregister(name)
}
