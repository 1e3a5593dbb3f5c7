//go:build !js

package core

import (
	"github.com/a3s-lab/code-wasm/workspace/dirfs"
)

// openDirectory opens Options.Directory natively: os.Root, and the exec
// capability (bash; git in a repository).
func openDirectory(root string, o dirfs.ExecOptions) (directoryDriver, error) {
	d, err := dirfs.Open(root)
	if err != nil {
		return nil, err
	}
	if err := d.EnableExec(o); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}
