package tree

import (
	"context"

	"github.com/a3s-lab/code-wasm/workspace"
)

// Locker is the driver's lock over a tree, as a walk takes it: for
// reading, once for the root and once per directory listed, so writers are
// not held off for the whole walk. RLock may refuse (a closed driver); its
// error ends the walk.
type Locker interface {
	RLock() error
	RUnlock()
}

// Walk implements workspace.Walker over the tree: lexical order,
// directories before their contents, from the cached listings, each taken
// under one hold of lk.
func (t *Tree[F]) Walk(ctx context.Context, root string, lk Locker, fn workspace.WalkFunc) error {
	r, err := t.walkRoot(root, lk)
	if err != nil {
		return err
	}
	return workspace.WalkTreeOf(ctx, root, r, t.lister(lk), fn)
}

// WalkRuns implements workspace.RunWalker: Walk's entries in runs cut from
// the cached listings, which fn gets as they are (it must not modify
// them).
func (t *Tree[F]) WalkRuns(ctx context.Context, root string, lk Locker, fn workspace.WalkRunFunc) error {
	r, err := t.walkRoot(root, lk)
	if err != nil {
		return err
	}
	return workspace.WalkRunsOf(ctx, root, r, t.lister(lk), fn)
}

func (t *Tree[F]) walkRoot(root string, lk Locker) (Ref[F], error) {
	if err := lk.RLock(); err != nil {
		return Ref[F]{}, err
	}
	defer lk.RUnlock()
	n, err := t.dir(root)
	if err != nil {
		return Ref[F]{}, err
	}
	return Ref[F]{n, n.epoch}, nil
}

// lister is the walk's directory listing, under one hold of lk. h is
// dir's node from the listing the walk found dir in: while it has not
// moved nor been removed since (its epoch says so) no lookup is needed;
// otherwise dir is looked up, and a directory no longer there lists as
// empty.
func (t *Tree[F]) lister(lk Locker) func(dir string, h Ref[F]) (*Listing[F], error) {
	return func(dir string, h Ref[F]) (*Listing[F], error) {
		if err := lk.RLock(); err != nil {
			return nil, err
		}
		defer lk.RUnlock()
		n := h.n
		if n == nil || n.epoch != h.epoch {
			n = t.nodes[dir]
		}
		if n == nil || !n.dir {
			return nil, nil
		}
		return t.listing(dir, n), nil
	}
}

// flatFiles is every file of the tree in walk order, built once and
// shared until the tree's shape changes: a search of a directory is a
// slice of it (a directory's files are contiguous in walk order).
type flatFiles struct {
	shape uint64
	files []string
	dirs  map[string][2]int // directory path -> its files' range in files
}

// Files implements workspace.FileLister: the paths of every file under
// dir, in Walk's order, from a list built at the first call after the
// tree's shape last changed (writing a file's content does not change it).
// The slice is shared: callers must not modify it. Safe under the read
// lock: racing builders store equal lists.
func (t *Tree[F]) Files(dir string) ([]string, error) {
	if _, err := t.dir(dir); err != nil {
		return nil, err
	}
	flat := t.flat.Load()
	if flat == nil || flat.shape != t.shape {
		flat = t.flatten()
		t.flat.Store(flat)
	}
	r := flat.dirs[dir]
	return flat.files[r[0]:r[1]:r[1]], nil
}

// flatten lists the whole tree from the cached listings.
func (t *Tree[F]) flatten() *flatFiles {
	flat := &flatFiles{shape: t.shape, dirs: map[string][2]int{}}
	var add func(dir string, n *Node[F])
	add = func(dir string, n *Node[F]) {
		start := len(flat.files)
		l := t.listing(dir, n)
		for i, e := range l.Entries {
			if e.Kind == workspace.KindDir {
				add(l.Paths[i], t.nodes[l.Paths[i]])
			} else {
				flat.files = append(flat.files, l.Paths[i])
			}
		}
		flat.dirs[dir] = [2]int{start, len(flat.files)}
	}
	add(".", t.nodes["."])
	return flat
}

// Driver is what a driver over a Tree serves: workspace.Driver and every
// optional extra, since the tree makes each cheap (walks and file lists
// from its caches, lines and data from the content the driver holds).
// memfs and opfs assert it.
type Driver interface {
	workspace.Driver
	workspace.LineReader
	workspace.Appender
	workspace.Putter
	workspace.Walker
	workspace.RunWalker
	workspace.FileLister
	workspace.DataReader
}
