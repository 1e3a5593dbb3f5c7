//go:build js && wasm

package main

import (
	"context"
	"time"

	"github.com/a3s-lab/code-wasm/internal/hostapi"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/opfs"
)

// drivers lists the workspace kinds beyond memory this build can serve.
func drivers() map[string]func(hostapi.WorkspaceOptions) (workspace.Driver, error) {
	return map[string]func(hostapi.WorkspaceOptions) (workspace.Driver, error){
		// opfs: browsers, inside a dedicated Worker (the browser entry runs
		// the wasm in one). Replaying a large log takes a while; a minute
		// bounds a wedged OPFS call.
		"opfs": func(o hostapi.WorkspaceOptions) (workspace.Driver, error) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			return opfs.Open(ctx, o.Root, opfs.Options{})
		},
	}
}
