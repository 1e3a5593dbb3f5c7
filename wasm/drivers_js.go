//go:build js && wasm

package main

import (
	"github.com/a3s-lab/code-wasm/internal/hostapi"
	"github.com/a3s-lab/code-wasm/workspace"
)

// drivers lists the workspace kinds beyond memory this build can serve.
func drivers() map[string]func(hostapi.WorkspaceOptions) (workspace.Driver, error) {
	return map[string]func(hostapi.WorkspaceOptions) (workspace.Driver, error){}
}
