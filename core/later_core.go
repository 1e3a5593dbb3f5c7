//go:build codewasm_core

package core

import (
	"errors"

	"github.com/a3s-lab/code-wasm/kernel"
)

// A codewasm_core build: the file tools only, to measure their size
// (later.go wires the rest). An option of the rest is refused.
var errNotInCore = errors.New("core: not in this build (codewasm_core: the file tools only)")

func registerLater(_ *kernel.Registry, opts Options) error {
	if opts.WebFetch != nil || opts.WebSearch != nil || opts.LLM != nil {
		return errNotInCore
	}
	return nil
}

func (s *Session) startLater(opts Options) error {
	if len(opts.McpServers) > 0 || len(opts.Agents) > 0 || len(opts.Skills) > 0 {
		s.k.Close()
		return errNotInCore
	}
	s.agents = &agents{}
	return nil
}

func (s *Session) closeLater() {}
