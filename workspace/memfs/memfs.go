package memfs

import (
	"context"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// FS is an in-memory workspace driver. The zero value is not usable; call
// New. It is safe for concurrent use.
type FS struct {
	mu    sync.RWMutex
	nodes map[string]*node // resolved path -> node; "." is the root
	now   func() time.Time
	// shape counts changes to which paths exist (a file or directory
	// created, removed or moved; not a file's content), under the write
	// lock. The flat file list (files.go) is good while it is unchanged.
	shape uint64
	flat  atomic.Pointer[flatFiles]
}

type node struct {
	// epoch counts the node's moves and its removal (under the write
	// lock): a walk holding the node from a listing checks with it that
	// the node is still where the listing saw it.
	epoch    uint32
	dir      bool
	children map[string]struct{} // dir only: base names
	c        *content            // file only; replaced, never mutated
	mod      time.Time
	// list caches the directory's entries in lexical order and their
	// paths, so listings and walks neither sort a map nor build a path
	// string each time. It is built under the read lock (racing builders
	// store equal results) and dropped under the write lock whenever an
	// entry or path it holds could differ: by changed, and by moveTree for
	// every directory that moves (its children's paths change).
	list atomic.Pointer[listing]
}

// listing is a directory's cached listing: entries sorted by name, the
// workspace path and node of each and the indices of the directories.
// Never modified once stored.
type listing = workspace.Listing[ref]

// ref is a node as a listing saw it: still good while the node's epoch is
// the same (it has not moved nor been removed since).
type ref struct {
	n     *node
	epoch uint32
}

// changed records that directory dir's children changed at now: its
// modification time moves, its cached listing is dropped, and so is its
// parent's (which holds dir's ModTime). Called under the write lock.
func (f *FS) changed(dir string, now time.Time) {
	n := f.nodes[dir]
	n.mod = now
	n.list.Store(nil)
	if dir != "." {
		f.nodes[path.Dir(dir)].list.Store(nil)
	}
}

// child is the path of name in directory dir: dir and name are already
// clean, so no path.Join.
func child(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// content is immutable once stored, so readers share data. Its version is
// hashed at most once: before the write lock is taken when the caller needs
// it (WriteFile, AppendFile), or on first use for PutFile, which is how a
// large tree is loaded without hashing files nobody reads. sync.Once makes
// concurrent first uses safe; the hash is never computed under f.mu except
// for a compare-and-swap against a file nobody has read yet.
type content struct {
	data []byte
	once sync.Once
	ver  workspace.Version
}

func hashedContent(data []byte) *content {
	c := &content{data: data}
	c.version()
	return c
}

func (c *content) version() workspace.Version {
	c.once.Do(func() { c.ver = workspace.VersionOf(c.data) })
	return c.ver
}

// New returns an empty file system.
func New() *FS {
	f := &FS{nodes: map[string]*node{}, now: time.Now}
	f.nodes["."] = &node{dir: true, children: map[string]struct{}{}, mod: f.now()}
	return f
}

// Capabilities: read, write and search; no exec, no git.
func (f *FS) Capabilities() workspace.Capabilities {
	return workspace.Capabilities{Read: true, Write: true, Search: true}
}

func (f *FS) entry(name string, n *node) workspace.Entry {
	e := workspace.Entry{Name: path.Base(name), ModTime: n.mod}
	if n.dir {
		e.Kind = workspace.KindDir
	} else {
		e.Kind = workspace.KindFile
		e.Size = int64(len(n.c.data))
	}
	return e
}

func ctxErr(ctx context.Context) error { return ctx.Err() }

// Stat implements workspace.Driver.
func (f *FS) Stat(ctx context.Context, name string) (workspace.Entry, error) {
	if err := ctxErr(ctx); err != nil {
		return workspace.Entry{}, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(name)
	if err != nil {
		return workspace.Entry{}, err
	}
	return f.entry(name, n), nil
}

// lookup finds a node; a file in the middle of the path gives ErrNotDir.
func (f *FS) lookup(name string) (*node, error) {
	if n, ok := f.nodes[name]; ok {
		return n, nil
	}
	for p := path.Dir(name); p != "."; p = path.Dir(p) {
		if n, ok := f.nodes[p]; ok {
			if !n.dir {
				return nil, workspace.ErrNotDir
			}
			break
		}
	}
	return nil, fs.ErrNotExist
}

// ReadFile implements workspace.Driver. The returned slice is shared.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, workspace.Version, error) {
	c, err := f.fileContent(ctx, name)
	if err != nil {
		return nil, "", err
	}
	return c.data, c.version(), nil
}

// ReadLines implements workspace.LineReader over the stored bytes (no
// version: a range read does not hash the file).
func (f *FS) ReadLines(ctx context.Context, name string, offset, limit int) (workspace.LineRange, error) {
	c, err := f.fileContent(ctx, name)
	if err != nil {
		return workspace.LineRange{}, err
	}
	return workspace.SliceLines(c.data, offset, limit), nil
}

// WriteFile implements workspace.Driver. data is kept, not copied.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	if err := ctxErr(ctx); err != nil {
		return "", err
	}
	c := hashedContent(data)
	if ifVersion != "" {
		// Hash the current content (if it was stored by PutFile and never
		// read) before taking the write lock.
		f.mu.RLock()
		n, err := f.lookup(name)
		f.mu.RUnlock()
		if err == nil && !n.dir {
			n.c.version()
		}
	}
	f.mu.Lock()
	err := f.writeLocked(name, c, ifVersion)
	f.mu.Unlock()
	if err != nil {
		return "", err
	}
	return c.version(), nil
}

// PutFile implements workspace.Putter: an unconditional write whose
// version is hashed only when first asked for.
func (f *FS) PutFile(ctx context.Context, name string, data []byte) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writeLocked(name, &content{data: data}, "")
}

func (f *FS) writeLocked(name string, c *content, ifVersion workspace.Version) error {
	old, err := f.lookup(name)
	switch {
	case err == nil && old.dir:
		return workspace.ErrIsDir
	case err != nil && err != fs.ErrNotExist:
		return err
	}
	if ifVersion != "" {
		if old == nil {
			return &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: "(missing)"}
		}
		if cur := old.c.version(); cur != ifVersion {
			return &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: cur}
		}
	}
	if old == nil {
		if err := f.mkdirAllLocked(path.Dir(name)); err != nil {
			return err
		}
		f.shape++
	}
	now := f.now()
	f.nodes[name] = &node{c: c, mod: now}
	f.nodes[path.Dir(name)].children[path.Base(name)] = struct{}{}
	f.changed(path.Dir(name), now)
	return nil
}

// AppendFile implements workspace.Appender. The new content is built and
// hashed outside the write lock, then installed only if the file still
// holds the content it was built from (else it is rebuilt), so appends are
// atomic without hashing under the lock.
func (f *FS) AppendFile(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	for {
		if err := ctxErr(ctx); err != nil {
			return "", err
		}
		f.mu.RLock()
		n, err := f.lookup(name)
		f.mu.RUnlock()
		var base *content
		switch {
		case err == nil && n.dir:
			return "", workspace.ErrIsDir
		case err == nil:
			base = n.c
		case err != fs.ErrNotExist:
			return "", err
		}
		var old []byte
		if base != nil {
			old = base.data
		}
		buf := make([]byte, 0, len(old)+len(data))
		c := hashedContent(append(append(buf, old...), data...))
		if base != nil {
			base.version() // for the check below, outside the lock
		}

		f.mu.Lock()
		var now *content
		cur, err := f.lookup(name)
		if err == nil && !cur.dir {
			now = cur.c
		}
		// The file changed since base was read. If the append may still
		// happen (unconditional, or the version still matches), rebuild
		// from the new content; otherwise writeLocked reports the error.
		if now != base && (err == nil || err == fs.ErrNotExist) && (ifVersion == "" || (now != nil && now.ver == ifVersion)) {
			f.mu.Unlock()
			continue
		}
		err = f.writeLocked(name, c, ifVersion)
		f.mu.Unlock()
		if err != nil {
			return "", err
		}
		return c.version(), nil
	}
}

// MkdirAll implements workspace.Driver.
func (f *FS) MkdirAll(ctx context.Context, name string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mkdirAllLocked(name)
}

func (f *FS) mkdirAllLocked(name string) error {
	if n, ok := f.nodes[name]; ok {
		if !n.dir {
			return workspace.ErrNotDir
		}
		return nil
	}
	parent := path.Dir(name)
	if err := f.mkdirAllLocked(parent); err != nil {
		return err
	}
	now := f.now()
	f.shape++
	f.nodes[name] = &node{dir: true, children: map[string]struct{}{}, mod: now}
	f.nodes[parent].children[path.Base(name)] = struct{}{}
	f.changed(parent, now)
	return nil
}

// ReadDir implements workspace.Driver.
func (f *FS) ReadDir(ctx context.Context, name string) ([]workspace.Entry, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(name)
	if err != nil {
		return nil, err
	}
	if !n.dir {
		return nil, workspace.ErrNotDir
	}
	return slices.Clone(f.listLocked(name, n).Entries), nil
}

// listLocked returns the sorted entries of directory n (at name) and
// their paths, from the cache when it is there. The listing is shared:
// callers must not modify it. Called under the read or the write lock.
func (f *FS) listLocked(name string, n *node) *listing {
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
	l := &listing{Entries: make([]workspace.Entry, len(names)), Paths: make([]string, len(names)), Handles: make([]ref, len(names)), Dirs: []int{}}
	start := 0
	for i, c := range names {
		p := all[start:ends[i]]
		start = ends[i]
		cn := f.nodes[p]
		l.Paths[i], l.Handles[i] = p, ref{cn, cn.epoch}
		l.Entries[i] = f.entry(c, cn)
		if cn.dir {
			l.Dirs = append(l.Dirs, i)
		}
	}
	n.list.Store(l)
	return l
}

// Remove implements workspace.Driver.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	if name == "." {
		return fs.ErrInvalid // the workspace refuses this first; never delete the root
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.lookup(name); err != nil {
		return err
	}
	f.shape++
	f.deleteTree(name)
	delete(f.nodes[path.Dir(name)].children, path.Base(name))
	f.changed(path.Dir(name), f.now())
	return nil
}

func (f *FS) deleteTree(name string) {
	n := f.nodes[name]
	n.epoch++
	if n.dir {
		for c := range n.children {
			f.deleteTree(child(name, c))
		}
	}
	delete(f.nodes, name)
}

// Rename implements workspace.Driver.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if from == "." || to == "." || from == to || strings.HasPrefix(to, from+"/") {
		return fs.ErrInvalid // the workspace refuses these first
	}
	src, err := f.lookup(from)
	if err != nil {
		return err
	}
	if dst, err := f.lookup(to); err == nil {
		if dst.dir {
			return fs.ErrExist
		}
		if src.dir {
			return workspace.ErrNotDir
		}
	} else if err != fs.ErrNotExist {
		return err
	}
	if err := f.mkdirAllLocked(path.Dir(to)); err != nil {
		return err
	}
	f.shape++
	f.moveTree(from, to)
	now := f.now()
	delete(f.nodes[path.Dir(from)].children, path.Base(from))
	f.changed(path.Dir(from), now)
	f.nodes[path.Dir(to)].children[path.Base(to)] = struct{}{}
	f.changed(path.Dir(to), now)
	return nil
}

// moveTree re-keys the subtree at from to to, visiting only that subtree.
// Children maps hold base names, so they stay valid as they are; cached
// listings hold paths, so each moved directory's is dropped.
func (f *FS) moveTree(from, to string) {
	n := f.nodes[from]
	delete(f.nodes, from)
	if old := f.nodes[to]; old != nil {
		old.epoch++ // a file replaced by the move
	}
	f.nodes[to] = n
	n.epoch++
	if n.dir {
		n.list.Store(nil)
		for c := range n.children {
			f.moveTree(from+"/"+c, to+"/"+c)
		}
	}
}

// Walk implements workspace.Walker: lexical order, directories before their
// contents, under one read lock per directory.
func (f *FS) Walk(ctx context.Context, root string, fn workspace.WalkFunc) error {
	n, err := f.walkRoot(root)
	if err != nil {
		return err
	}
	return workspace.WalkTreeOf(ctx, root, n, f.list, fn)
}

// WalkRuns implements workspace.RunWalker: Walk's entries in runs cut from
// the cached listings, which fn gets as they are (it must not modify
// them).
func (f *FS) WalkRuns(ctx context.Context, root string, fn workspace.WalkRunFunc) error {
	n, err := f.walkRoot(root)
	if err != nil {
		return err
	}
	return workspace.WalkRunsOf(ctx, root, n, f.list, fn)
}

func (f *FS) walkRoot(root string) (ref, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	n, err := f.lookup(root)
	if err == nil && !n.dir {
		err = workspace.ErrNotDir
	}
	if err != nil {
		return ref{}, err
	}
	return ref{n, n.epoch}, nil
}

// list is the walk's directory listing: one read lock per directory, so
// writers are not held off for the whole walk. h is dir's node from the
// listing the walk found dir in: while it has not moved nor been removed
// since (its epoch says so) no lookup is needed; otherwise dir is looked
// up, and a directory no longer there lists as empty.
func (f *FS) list(dir string, h ref) (*listing, error) {
	f.mu.RLock()
	n := h.n
	if n == nil || n.epoch != h.epoch {
		n = f.nodes[dir]
	}
	var l *listing
	if n != nil && n.dir {
		l = f.listLocked(dir, n)
	}
	f.mu.RUnlock()
	return l, nil
}

var (
	_ workspace.Driver     = (*FS)(nil)
	_ workspace.LineReader = (*FS)(nil)
	_ workspace.Appender   = (*FS)(nil)
	_ workspace.Walker     = (*FS)(nil)
	_ workspace.RunWalker  = (*FS)(nil)
	_ workspace.FileLister = (*FS)(nil)
	_ workspace.Putter     = (*FS)(nil)
)
