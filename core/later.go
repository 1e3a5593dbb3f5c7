//go:build !codewasm_core

package core

import (
	"context"
	"fmt"

	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/mcp"
	"github.com/a3s-lab/code-wasm/tools"
)

// The wiring of what came after the file tools (issues 13-17): web_fetch,
// web_search, generate_object, the agent loop, delegation and skills, MCP.
// A build with the tag codewasm_core swaps this file for later_core.go,
// which leaves them out, so the file-tool half's size can be measured
// (bench/size.bench.mjs).

// registerLater registers the optional built-in tools the options give.
func registerLater(reg *kernel.Registry, opts Options) error {
	if opts.WebFetch != nil {
		if err := reg.RegisterBuiltin(opts.WebFetch); err != nil {
			return err
		}
	}
	if opts.WebSearch != nil {
		if err := reg.RegisterBuiltin(opts.WebSearch); err != nil {
			return err
		}
	}
	// The LLM tools exist only with a model (API.md).
	if opts.LLM != nil {
		if err := reg.RegisterBuiltin(tools.NewGenerateObject(opts.LLM)); err != nil {
			return err
		}
	}
	return nil
}

// startLater starts the agent loop, delegation, skills and the MCP
// servers of a new session; on an error the kernel is closed.
func (s *Session) startLater(opts Options) error {
	s.agents, s.mcp = newAgents(opts, s.k, s.bus), mcp.NewServers(s.reg)
	if err := s.startDelegation(opts); err != nil {
		s.k.Close()
		return err
	}
	for _, c := range opts.McpServers {
		if _, err := s.mcp.Add(context.Background(), c); err != nil && !mcp.IsConnectError(err) {
			return fmt.Errorf("mcpServers: %w", err)
		}
	}
	return nil
}

// closeLater stops delegation and cancels agent runs (Close).
func (s *Session) closeLater() {
	if s.delegation != nil {
		s.delegation.Close()
	}
	s.agents.close()
}
