package tree

import (
	"io/fs"
	"iter"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// Tree is a workspace's file tree in memory, keyed by resolved path ("."
// is the root). F is what a file's content is to the driver. The zero
// value is not usable; call New.
type Tree[F any] struct {
	nodes map[string]*Node[F]
	// drop is told of every file content that leaves the tree (replaced
	// by Put or Rename, or removed); nil when the driver has nothing to
	// release.
	drop func(F)
	// shape counts changes to which paths exist (a file or directory
	// created, removed or moved; not a file's content). The flat file
	// list is good while it is unchanged.
	shape uint64
	flat  atomic.Pointer[flatFiles]
}

// Node is one file or directory. What it holds never changes once a
// reader can see it, except through the Tree under the driver's write
// lock: a Put makes a new node, so a file node's File stays what it was
// when the driver looked the node up.
type Node[F any] struct {
	// epoch counts the node's moves, its replacement and its removal: a
	// walk holding the node from a listing checks with it that the node
	// is still where the listing saw it.
	epoch    uint32
	dir      bool
	children map[string]struct{} // dir only: base names
	file     F                   // file only
	size     int64               // file only
	mod      time.Time
	// list caches the directory's entries in lexical order and their
	// paths, so listings and walks neither sort a map nor build a path
	// string each time. It is built under the read lock (racing builders
	// store equal results) and dropped under the write lock whenever an
	// entry or path it holds could differ: by changed, and by moveTree for
	// every directory that moves (its children's paths change).
	list atomic.Pointer[Listing[F]]
}

// IsDir reports whether n is a directory.
func (n *Node[F]) IsDir() bool { return n.dir }

// File is a file node's content as the driver stored it (the zero F for a
// directory).
func (n *Node[F]) File() F { return n.file }

// Size is a file's size as the driver stored it (0 for a directory).
func (n *Node[F]) Size() int64 { return n.size }

// ModTime is when the file was written, or when the directory's entries
// last changed.
func (n *Node[F]) ModTime() time.Time { return n.mod }

// Entry describes n under base name name.
func (n *Node[F]) Entry(name string) workspace.Entry {
	e := workspace.Entry{Name: name, ModTime: n.mod}
	if n.dir {
		e.Kind = workspace.KindDir
	} else {
		e.Kind = workspace.KindFile
		e.Size = n.size
	}
	return e
}

// Ref is a node as a listing saw it: still good while the node's epoch is
// the same (it has not moved nor been removed since).
type Ref[F any] struct {
	n     *Node[F]
	epoch uint32
}

// Listing is a directory's cached listing: entries sorted by name, the
// workspace path and node of each and the indices of the directories.
// Never modified once stored.
type Listing[F any] = workspace.Listing[Ref[F]]

// New returns a tree holding only the root directory, modified at mod.
// drop, if not nil, is called (under the write lock) with every file
// content that leaves the tree.
func New[F any](mod time.Time, drop func(F)) *Tree[F] {
	t := &Tree[F]{nodes: map[string]*Node[F]{}, drop: drop}
	t.nodes["."] = &Node[F]{dir: true, children: map[string]struct{}{}, mod: mod}
	return t
}

// Len is the number of files and directories, the root not counted.
func (t *Tree[F]) Len() int { return len(t.nodes) - 1 }

// All yields every path and its node, the root included, in no order.
// The tree must not change during the iteration.
func (t *Tree[F]) All() iter.Seq2[string, *Node[F]] {
	return func(yield func(string, *Node[F]) bool) {
		for p, n := range t.nodes {
			if !yield(p, n) {
				return
			}
		}
	}
}

// Lookup finds a node: fs.ErrNotExist if it is missing, workspace.ErrNotDir
// if a file stands in the middle of the path.
func (t *Tree[F]) Lookup(name string) (*Node[F], error) {
	if n, ok := t.nodes[name]; ok {
		return n, nil
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if n, ok := t.nodes[p]; ok {
			if !n.dir {
				return nil, workspace.ErrNotDir
			}
			break
		}
	}
	return nil, fs.ErrNotExist
}

// Stat describes the entry at name.
func (t *Tree[F]) Stat(name string) (workspace.Entry, error) {
	n, err := t.Lookup(name)
	if err != nil {
		return workspace.Entry{}, err
	}
	return n.Entry(path.Base(name)), nil
}

// ReadDir lists directory name sorted by name: a copy of the cached
// listing's entries, so the caller may keep and change it.
func (t *Tree[F]) ReadDir(name string) ([]workspace.Entry, error) {
	n, err := t.dir(name)
	if err != nil {
		return nil, err
	}
	return slices.Clone(t.listing(name, n).Entries), nil
}

// dir looks up a directory: ErrNotDir for a file.
func (t *Tree[F]) dir(name string) (*Node[F], error) {
	n, err := t.Lookup(name)
	if err == nil && !n.dir {
		err = workspace.ErrNotDir
	}
	return n, err
}

// listing returns the sorted entries of directory n (at name) and their
// paths, from the cache when it is there. The listing is shared: callers
// must not modify it.
func (t *Tree[F]) listing(name string, n *Node[F]) *Listing[F] {
	if l := n.list.Load(); l != nil {
		return l
	}
	names := make([]string, 0, len(n.children))
	for c := range n.children {
		names = append(names, c)
	}
	slices.Sort(names)
	// The paths go in one string, in order: a walk reads them one after
	// the other (glob's suffix test), and scattered over the heap they
	// cost a cache miss each.
	var b strings.Builder
	size := 0
	for _, c := range names {
		size += len(name) + 1 + len(c)
	}
	b.Grow(size)
	ends := make([]int, len(names))
	for i, c := range names {
		if name != "." {
			b.WriteString(name)
			b.WriteByte('/')
		}
		b.WriteString(c)
		ends[i] = b.Len()
	}
	all := b.String()
	l := &Listing[F]{Entries: make([]workspace.Entry, len(names)), Paths: make([]string, len(names)), Handles: make([]Ref[F], len(names)), Dirs: []int{}}
	start := 0
	for i, c := range names {
		p := all[start:ends[i]]
		start = ends[i]
		cn := t.nodes[p]
		l.Paths[i], l.Handles[i] = p, Ref[F]{cn, cn.epoch}
		l.Entries[i] = cn.Entry(c)
		if cn.dir {
			l.Dirs = append(l.Dirs, i)
		}
	}
	n.list.Store(l)
	return l
}

// changed records that directory dir's children changed at mod: its
// modification time moves, its cached listing is dropped, and so is its
// parent's (which holds dir's ModTime).
func (t *Tree[F]) changed(dir string, n *Node[F], mod time.Time) {
	n.mod = mod
	n.list.Store(nil)
	if dir != "." {
		t.nodes[path.Dir(dir)].list.Store(nil)
	}
}

// CheckPut reports whether Put(name) would succeed, and returns the file
// it would replace (nil if there is none): workspace.ErrIsDir if name is a
// directory, workspace.ErrNotDir if a component above it is a file.
func (t *Tree[F]) CheckPut(name string) (*Node[F], error) {
	n, err := t.Lookup(name)
	switch {
	case err == fs.ErrNotExist:
		return nil, nil
	case err != nil:
		return nil, err
	case n.dir:
		return nil, workspace.ErrIsDir
	}
	return n, nil
}

// Put stores file (of size bytes) at name, modified at mod, creating
// missing parent directories and replacing a file that is there. Errors
// as CheckPut's; a failed Put changes nothing.
func (t *Tree[F]) Put(name string, file F, size int64, mod time.Time) error {
	old, err := t.CheckPut(name)
	if err != nil {
		return err
	}
	dir := path.Dir(name)
	if old == nil {
		if err := t.MkdirAll(dir, mod); err != nil {
			return err
		}
		t.shape++
	} else {
		t.retire(old)
	}
	t.nodes[name] = &Node[F]{file: file, size: size, mod: mod}
	p := t.nodes[dir]
	if old == nil {
		p.children[path.Base(name)] = struct{}{}
	}
	t.changed(dir, p, mod)
	return nil
}

// retire marks a node as gone from where listings saw it and, for a
// file, hands its content to drop.
func (t *Tree[F]) retire(n *Node[F]) {
	n.epoch++
	if !n.dir && t.drop != nil {
		t.drop(n.file)
	}
}

// MkdirAll creates directory name and its missing parents, all modified
// at mod. workspace.ErrNotDir if a component is a file; a directory that
// is there already is not an error (and does not change).
func (t *Tree[F]) MkdirAll(name string, mod time.Time) error {
	if n, ok := t.nodes[name]; ok {
		if !n.dir {
			return workspace.ErrNotDir
		}
		return nil
	}
	parent := path.Dir(name)
	if err := t.MkdirAll(parent, mod); err != nil {
		return err
	}
	t.shape++
	t.nodes[name] = &Node[F]{dir: true, children: map[string]struct{}{}, mod: mod}
	p := t.nodes[parent]
	p.children[path.Base(name)] = struct{}{}
	t.changed(parent, p, mod)
	return nil
}

// CheckRemove reports whether Remove(name) would succeed: fs.ErrNotExist,
// workspace.ErrNotDir as Lookup's, fs.ErrInvalid for the root.
func (t *Tree[F]) CheckRemove(name string) error {
	if name == "." {
		return fs.ErrInvalid // the workspace refuses this first; never delete the root
	}
	_, err := t.Lookup(name)
	return err
}

// Remove deletes a file, or a directory with everything under it, and
// marks its parent modified at mod. Errors as CheckRemove's.
func (t *Tree[F]) Remove(name string, mod time.Time) error {
	if err := t.CheckRemove(name); err != nil {
		return err
	}
	t.shape++
	t.deleteTree(name)
	dir := path.Dir(name)
	p := t.nodes[dir]
	delete(p.children, path.Base(name))
	t.changed(dir, p, mod)
	return nil
}

func (t *Tree[F]) deleteTree(name string) {
	n := t.nodes[name]
	t.retire(n)
	if n.dir {
		for c := range n.children {
			t.deleteTree(name + "/" + c)
		}
	}
	delete(t.nodes, name)
}

// CheckRename reports whether Rename(from, to) would succeed, with
// workspace.Driver.Rename's errors: fs.ErrNotExist if from is missing,
// fs.ErrExist if to is a directory, workspace.ErrNotDir if a parent of to
// is a file or from is a directory and to a file, and fs.ErrInvalid for
// the root, from == to and to inside from (which the workspace refuses
// first).
func (t *Tree[F]) CheckRename(from, to string) error {
	if from == "." || to == "." || from == to || strings.HasPrefix(to, from+"/") {
		return fs.ErrInvalid
	}
	src, err := t.Lookup(from)
	if err != nil {
		return err
	}
	dst, err := t.Lookup(to)
	switch {
	case err == nil && dst.dir:
		return fs.ErrExist
	case err == nil && src.dir:
		return workspace.ErrNotDir
	case err == fs.ErrNotExist:
		return nil
	}
	return err
}

// Rename moves the file or directory at from to to, replacing a file
// there and creating to's missing parents; both parents are marked
// modified at mod. It visits only the moved subtree. Errors as
// CheckRename's; a failed Rename changes nothing.
func (t *Tree[F]) Rename(from, to string, mod time.Time) error {
	if err := t.CheckRename(from, to); err != nil {
		return err
	}
	if err := t.MkdirAll(path.Dir(to), mod); err != nil {
		return err
	}
	if old := t.nodes[to]; old != nil {
		t.retire(old) // a file replaced by the move
	}
	t.shape++
	t.moveTree(from, to)
	fromDir, toDir := path.Dir(from), path.Dir(to)
	p := t.nodes[fromDir]
	delete(p.children, path.Base(from))
	t.changed(fromDir, p, mod)
	p = t.nodes[toDir]
	p.children[path.Base(to)] = struct{}{}
	t.changed(toDir, p, mod)
	return nil
}

// moveTree re-keys the subtree at from to to, visiting only that subtree.
// Children maps hold base names, so they stay valid as they are; cached
// listings hold paths, so each moved directory's is dropped.
func (t *Tree[F]) moveTree(from, to string) {
	n := t.nodes[from]
	delete(t.nodes, from)
	t.nodes[to] = n
	n.epoch++
	if n.dir {
		n.list.Store(nil)
		for c := range n.children {
			t.moveTree(from+"/"+c, to+"/"+c)
		}
	}
}
