package workspace

import "context"

// DataReader is implemented by drivers that can hand over a file's bytes
// without its Version. Versions are content hashes; a driver that hashes
// lazily (memfs after PutFile) would otherwise hash every file a search
// reads, and under js/wasm SHA-256 runs at a fraction of native speed.
type DataReader interface {
	ReadData(ctx context.Context, name string) ([]byte, error)
}

// ReadData is ReadFile without the version, for readers that never write
// back (grep): the same path rules and errors, through the driver's
// DataReader when it has one. The slice must not be modified.
func (w *Workspace) ReadData(ctx context.Context, p string) ([]byte, error) {
	dr, ok := w.d.(DataReader)
	if !ok {
		b, _, err := w.ReadFile(ctx, p)
		return b, err
	}
	name, err := w.resolveRead(ctx, "read", p)
	if err != nil {
		return nil, err
	}
	if err := w.need("read", name, w.caps.Read, "read"); err != nil {
		return nil, err
	}
	b, err := dr.ReadData(ctx, name)
	return b, wrap("read", name, err)
}
