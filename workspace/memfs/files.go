package memfs

import (
	"context"

	"github.com/a3s-lab/code-wasm/workspace"
)

// flatFiles is every file of the tree in walk order, built once and
// shared until the tree's shape changes: a search of a directory is a
// slice of it (a directory's files are contiguous in walk order).
type flatFiles struct {
	shape uint64
	files []string
	dirs  map[string][2]int // directory path -> its files' range in files
}

// Files implements workspace.FileLister: the paths of every file under dir,
// in Walk's order, from a list built at the first call after the tree's
// shape last changed (writing a file's content does not change it). The
// slice is shared: callers must not modify it.
func (f *FS) Files(ctx context.Context, dir string) ([]string, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(dir)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, workspace.ErrNotDir
	}
	flat := f.flat.Load()
	if flat == nil || flat.shape != f.shape {
		// Built under the read lock: racing builders store equal lists.
		flat = f.flatLocked()
		f.flat.Store(flat)
	}
	r := flat.dirs[dir]
	return flat.files[r[0]:r[1]:r[1]], nil
}

// flatLocked lists the whole tree from the cached listings. Called under
// the read lock.
func (f *FS) flatLocked() *flatFiles {
	flat := &flatFiles{shape: f.shape, dirs: map[string][2]int{}}
	var add func(dir string, n *node)
	add = func(dir string, n *node) {
		start := len(flat.files)
		l := f.listLocked(dir, n)
		for i, e := range l.Entries {
			if e.Kind == workspace.KindDir {
				add(l.Paths[i], f.nodes[l.Paths[i]])
			} else {
				flat.files = append(flat.files, l.Paths[i])
			}
		}
		flat.dirs[dir] = [2]int{start, len(flat.files)}
	}
	add(".", f.nodes["."])
	return flat
}
