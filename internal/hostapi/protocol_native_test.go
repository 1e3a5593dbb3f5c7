//go:build !js

package hostapi

import (
	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// protocolDrivers serve the directory workspace of the transcripts that
// use $TMP (natively, over the real disk).
var protocolDrivers = Drivers{
	"directory": func(o WorkspaceOptions) (workspace.Driver, error) { return dirfs.Open(o.Root) },
}
