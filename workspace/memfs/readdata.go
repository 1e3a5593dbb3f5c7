package memfs

import (
	"context"

	"github.com/a3s-lab/code-wasm/workspace"
)

// ReadData implements workspace.DataReader: ReadFile without hashing a
// file nobody has asked the version of. The returned slice is shared.
func (f *FS) ReadData(ctx context.Context, name string) ([]byte, error) {
	c, err := f.fileContent(ctx, name)
	if err != nil {
		return nil, err
	}
	return c.data, nil
}

// fileContent is the content of the file name, shared.
func (f *FS) fileContent(ctx context.Context, name string) (*content, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	f.mu.RLock()
	n, err := f.lookup(name)
	f.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if n.dir {
		return nil, workspace.ErrIsDir
	}
	return n.c, nil
}

var _ workspace.DataReader = (*FS)(nil)
