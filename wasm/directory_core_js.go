//go:build js && wasm && codewasm_core

package main

import (
	"syscall/js"

	"github.com/a3s-lab/code-wasm/internal/hostapi"
	"github.com/a3s-lab/code-wasm/workspace"
)

// openDirectory: a codewasm_core build (the file tools only, to measure
// their size) has no directory workspace; directory_js.go is the real one.
func openDirectory(js.Value, string) (workspace.Driver, error) {
	return nil, &hostapi.Error{Code: hostapi.CodeInvalidOptions, Msg: "createSession: options.workspace.kind 'directory' is not in this build (codewasm_core: the file tools only)"}
}
