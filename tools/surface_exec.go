//go:build !codewasm_core

package tools

import (
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// execTools are bash, and git when the workspace is a repository, for a
// workspace that runs commands. A codewasm_core build (the file tools
// only, to measure their size) lists none (surface_core.go).
func execTools(ws *workspace.Workspace) []kernel.Tool {
	ex, ok := ws.Executor()
	if !ok {
		return nil
	}
	out := []kernel.Tool{&Bash{ex: ex}}
	if ws.Capabilities().Git {
		out = append(out, &Git{ws: ws, ex: ex})
	}
	return out
}
