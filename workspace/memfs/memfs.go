package memfs

import (
	"context"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/internal/tree"
)

// FS is an in-memory workspace driver. The zero value is not usable; call
// New. It is safe for concurrent use.
type FS struct {
	mu  sync.RWMutex
	t   *tree.Tree[*content] // under mu
	now func() time.Time
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
	f := &FS{now: time.Now}
	f.t = tree.New[*content](f.now(), nil)
	return f
}

// Capabilities: read, write and search; no exec, no git.
func (f *FS) Capabilities() workspace.Capabilities {
	return workspace.Capabilities{Read: true, Write: true, Search: true}
}

func ctxErr(ctx context.Context) error { return ctx.Err() }

// Stat implements workspace.Driver.
func (f *FS) Stat(ctx context.Context, name string) (workspace.Entry, error) {
	if err := ctxErr(ctx); err != nil {
		return workspace.Entry{}, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.t.Stat(name)
}

// ReadFile implements workspace.Driver. The returned slice is shared.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, workspace.Version, error) {
	c, err := f.fileContent(ctx, name)
	if err != nil {
		return nil, "", err
	}
	return c.data, c.version(), nil
}

// Immediate implements workspace.Immediate: the files are in memory.
func (*FS) Immediate() bool { return true }

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
		n, err := f.t.Lookup(name)
		f.mu.RUnlock()
		if err == nil && !n.IsDir() {
			n.File().version()
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
	if ifVersion != "" {
		old, err := f.t.CheckPut(name)
		switch {
		case err != nil:
			return err
		case old == nil:
			return &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: "(missing)"}
		}
		if cur := old.File().version(); cur != ifVersion {
			return &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: cur}
		}
	}
	return f.t.Put(name, c, int64(len(c.data)), f.now())
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
		base, err := f.t.CheckPut(name)
		f.mu.RUnlock()
		if err != nil {
			return "", err
		}
		var old []byte
		if base != nil {
			old = base.File().data
		}
		buf := make([]byte, 0, len(old)+len(data))
		c := hashedContent(append(append(buf, old...), data...))
		if base != nil {
			base.File().version() // for the check below, outside the lock
		}

		f.mu.Lock()
		cur, err := f.t.CheckPut(name)
		// The file changed since base was read. If the append may still
		// happen (unconditional, or the version still matches), rebuild
		// from the new content; otherwise writeLocked reports the error.
		if cur != base && err == nil && (ifVersion == "" || (cur != nil && cur.File().ver == ifVersion)) {
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
	return f.t.MkdirAll(name, f.now())
}

// ReadDir implements workspace.Driver.
func (f *FS) ReadDir(ctx context.Context, name string) ([]workspace.Entry, error) {
	if err := ctxErr(ctx); err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.t.ReadDir(name)
}

// Remove implements workspace.Driver.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t.Remove(name, f.now())
}

// Rename implements workspace.Driver.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t.Rename(from, to, f.now())
}

// Walk implements workspace.Walker: lexical order, directories before their
// contents, under one read lock per directory.
func (f *FS) Walk(ctx context.Context, root string, fn workspace.WalkFunc) error {
	return f.t.Walk(ctx, root, (*readLock)(&f.mu), fn)
}

// WalkRuns implements workspace.RunWalker: Walk's entries in runs cut from
// the cached listings, which fn gets as they are (it must not modify
// them).
func (f *FS) WalkRuns(ctx context.Context, root string, fn workspace.WalkRunFunc) error {
	return f.t.WalkRuns(ctx, root, (*readLock)(&f.mu), fn)
}

// readLock is the tree's Locker for walks: f.mu for reading.
type readLock sync.RWMutex

func (l *readLock) RLock() error { (*sync.RWMutex)(l).RLock(); return nil }
func (l *readLock) RUnlock()     { (*sync.RWMutex)(l).RUnlock() }

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
	return f.t.Files(dir)
}

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
	n, err := f.t.Lookup(name)
	f.mu.RUnlock()
	if err != nil {
		return nil, err
	}
	if n.IsDir() {
		return nil, workspace.ErrIsDir
	}
	return n.File(), nil
}

var _ tree.Driver = (*FS)(nil)
