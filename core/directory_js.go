//go:build js

package core

import (
	"errors"

	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// openDirectory: under js/wasm the wasm never touches the disk; the npm
// package opens a directory through its host (workspace kind 'directory').
func openDirectory(string, dirfs.ExecOptions) (directoryDriver, error) {
	return nil, errors.New("a directory is opened by the host under js/wasm: use the npm package's { kind: 'directory', root }, or workspace/dirfs.OpenHost")
}
