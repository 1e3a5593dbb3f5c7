//go:build js && wasm

package main

import (
	"context"
	"errors"
	"fmt"
	"syscall/js"
	"time"

	"github.com/a3s-lab/code-wasm/internal/hostapi"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/opfs"
)

// drivers lists the workspace kinds beyond memory this build can serve.
// services is what the entry point offers besides the dispatcher (an
// object, or undefined): its directory(root) opens a directory host.
func drivers(services js.Value) map[string]func(hostapi.WorkspaceOptions) (workspace.Driver, error) {
	return map[string]func(hostapi.WorkspaceOptions) (workspace.Driver, error){
		// directory: Node only. The entry point's services.directory
		// (npm/src/dirhost.mjs) opens the root and does every file
		// operation; the wasm never touches the disk.
		"directory": func(o hostapi.WorkspaceOptions) (workspace.Driver, error) {
			return openDirectory(services, o.Root)
		},
		// opfs: browsers, inside a dedicated Worker (the browser entry runs
		// the wasm in one). Replaying a large log takes a while; a minute
		// bounds a wedged OPFS call.
		"opfs": func(o hostapi.WorkspaceOptions) (workspace.Driver, error) {
			if !opfsAvailable() {
				return nil, errors.New("the opfs workspace needs a browser (Origin Private File System); use kind 'memory' here")
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			d, err := opfs.Open(ctx, o.Root, opfs.Options{})
			if errors.Is(err, opfs.ErrBusy) {
				return nil, &hostapi.Error{Code: hostapi.CodeWorkspaceBusy, Msg: fmt.Sprintf(
					"createSession: the OPFS root %q is open in another tab or worker; one session may hold a root at a time (close it there, or choose another root)", o.Root)}
			}
			return d, err
		},
	}
}

// opfsAvailable reports whether this thread has the Origin Private File
// System with sync access handles: a browser's dedicated worker (where the
// browser entry runs the wasm). Node and Cloudflare Workers have neither.
func opfsAvailable() bool {
	nav := js.Global().Get("navigator")
	if nav.Type() != js.TypeObject {
		return false
	}
	st := nav.Get("storage")
	if st.Type() != js.TypeObject || st.Get("getDirectory").Type() != js.TypeFunction {
		return false
	}
	return js.Global().Get("FileSystemSyncAccessHandle").Type() == js.TypeFunction
}
