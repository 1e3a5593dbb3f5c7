//go:build js && wasm && !codewasm_core

package main

import (
	"fmt"
	"syscall/js"

	"github.com/a3s-lab/code-wasm/internal/hostapi"
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// openDirectory opens a directory workspace through the host's
// services.directory(root), which throws when root does not exist or is
// not a directory; those errors name options.workspace.root, or the field
// the error's option names (kind, on a platform the host cannot serve).
func openDirectory(services js.Value, root string) (d workspace.Driver, err error) {
	invalid := func(format string, args ...any) error {
		return &hostapi.Error{Code: hostapi.CodeInvalidOptions, Msg: "createSession: options.workspace." + fmt.Sprintf(format, args...)}
	}
	open := js.Undefined()
	if services.Type() == js.TypeObject {
		open = services.Get("directory")
	}
	if open.Type() != js.TypeFunction {
		return nil, invalid("kind 'directory' needs Node.js (real files on disk, opened by the host); in browsers use 'opfs' or 'memory', in Cloudflare Workers 'memory'")
	}
	if root == "" {
		return nil, invalid("root is required for a directory workspace: the path of an existing directory")
	}
	defer func() {
		if r := recover(); r != nil {
			je, ok := r.(js.Error)
			if !ok {
				panic(r)
			}
			field := "root"
			if je.Value.Get("option").Type() == js.TypeString {
				field = je.Value.Get("option").String()
			}
			d, err = nil, invalid("%s %s", field, je.Value.Get("message").String())
		}
	}()
	return dirfs.OpenHost(open.Invoke(root))
}
