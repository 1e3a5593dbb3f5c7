//go:build !codewasm_core

package hostapi

import (
	"slices"
	"strings"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/r2"
)

// openR2 opens options.workspace {kind: 'r2', root: '<prefix>/<session>'}:
// the session's files in R2 under that key prefix, every operation one
// r2.* host kind answered by the Worker's R2 binding (npm/src/r2host.mjs;
// the binding stays in JS and is reached per call). Only a host that
// states the r2 kinds serves it: the Cloudflare Worker entry.
func openR2(w WorkspaceOptions, env Env, host Host) (workspace.Driver, error) {
	if host == nil || env.HostKinds == nil || !slices.Contains(env.HostKinds, "r2.get") {
		return nil, errf(CodeInvalidOptions, "createSession: options.workspace.kind 'r2' needs the Cloudflare Worker entry (@a3s-lab/code-wasm/worker), whose host answers it with an R2 binding")
	}
	i := strings.LastIndex(w.Root, "/")
	if i < 0 {
		return nil, errf(CodeInvalidOptions, "createSession: options.workspace.root %q must be '<prefix>/<session>' for an r2 workspace", w.Root)
	}
	d, err := r2.New(r2.HostBucket{Host: host}, w.Root[:i], w.Root[i+1:])
	if err != nil {
		return nil, errf(CodeInvalidOptions, "createSession: options.workspace.root: %v", err)
	}
	return d, nil
}
