//go:build codewasm_core

package tools

import (
	"github.com/a3s-lab/code-wasm/kernel"
	"github.com/a3s-lab/code-wasm/workspace"
)

// execTools: a codewasm_core build (the file tools only) has no bash or
// git; surface_exec.go is the real one.
func execTools(*workspace.Workspace) []kernel.Tool { return nil }
