//go:build !js

package core

import (
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// openDirectory opens Options.Directory natively: os.Root.
func openDirectory(root string) (directoryDriver, error) { return dirfs.Open(root) }
