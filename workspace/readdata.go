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

// FileLister is implemented by drivers that can list every file under a
// directory at once (memfs keeps the list). A search that looks at every
// file then needs no walk at all.
type FileLister interface {
	// Files returns the paths of the files (not directories) under dir,
	// in Walk's order. The slice may be the driver's own: it must not be
	// modified.
	Files(ctx context.Context, dir string) ([]string, error)
}

// Files returns the workspace paths of every file under directory p, in
// Walk's order (ErrNotDir for a file): from the driver's FileLister, or a
// walk. The slice must not be modified. A walk cut at the driver's scan
// limit (ScanLimiter) returns the files before the cut with its
// *ScanLimitError.
func (w *Workspace) Files(ctx context.Context, p string) ([]string, error) {
	name, err := w.resolve(ctx, "walk", p)
	if err != nil {
		return nil, err
	}
	if err := w.need("walk", name, w.caps.Read, "read"); err != nil {
		return nil, err
	}
	if fl, ok := w.d.(FileLister); ok {
		files, err := fl.Files(ctx, name)
		return files, wrap("walk", name, err)
	}
	var files []string
	err = w.WalkRuns(ctx, name, func(ps []string, es []Entry) error {
		for i := range es {
			if es[i].Kind != KindDir {
				files = append(files, ps[i])
			}
		}
		return nil
	})
	return files, err
}
