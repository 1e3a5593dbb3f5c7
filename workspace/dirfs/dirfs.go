package dirfs

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/a3s-lab/code-wasm/workspace"
)

// backend is what a host provides: a few file operations on the root,
// each confined to it. Paths are the driver's (clean, slash-separated,
// relative, "." for the root). Errors are the workspace's sentinels
// (workspace.ErrNotExist, ErrIsDir, ErrNotDir, ErrExist, errEscape) or a
// host error that does not repeat the path: the workspace names it.
type backend interface {
	// stat describes name, following symbolic links inside the root when
	// follow is set (else the link itself).
	stat(name string, follow bool) (workspace.Entry, error)
	// readFile reads a regular file: ErrIsDir for a directory.
	readFile(name string) ([]byte, error)
	// writeFile replaces (or, with add, appends to) a regular file,
	// creating it and its missing parents.
	writeFile(name string, data []byte, add bool) error
	// readDir lists a directory in any order; entries describe links
	// themselves.
	readDir(name string) ([]workspace.Entry, error)
	mkdirAll(name string) error
	// removeAll deletes a file, link or directory tree: ErrNotExist if
	// missing. A link is removed, never what it points to.
	removeAll(name string) error
	// rename is rename(2) within the root.
	rename(from, to string) error
	root() string
	close() error
}

// errEscape is the error of a path that a symbolic link leads out of the
// root: the workspace's path-escape error.
var errEscape error = escapeError{}

// escapeError reads as workspace.ErrPathEscape with the symbolic link
// named, and is it for errors.Is (no fmt at package init).
type escapeError struct{}

func (escapeError) Error() string {
	return workspace.ErrPathEscape.Error() + " (through a symbolic link)"
}
func (escapeError) Unwrap() error { return workspace.ErrPathEscape }

// errNotRegular refuses devices, sockets and FIFOs: reading one could
// block or have effects.
var errNotRegular = errors.New("not a regular file (a device, socket or FIFO)")

// FS is the directory workspace driver over one host's backend. It is
// safe for concurrent use: writes within the process are serialised, so
// compare-and-swaps and appends are atomic against each other and reads
// never see half a write by this driver. Other processes (bash, an
// editor) write the same files without that guarantee.
type FS struct {
	b    backend
	mu   sync.RWMutex // writers of content and shape exclusive; readers of content shared
	caps workspace.Capabilities
	exec execer // set by EnableExec (exec.go)
}

func newFS(b backend) *FS {
	return &FS{b: b, caps: workspace.Capabilities{Read: true, Write: true, Search: true}}
}

// Capabilities: read, write and search.
func (f *FS) Capabilities() workspace.Capabilities { return f.caps }

// Root is the absolute path of the root directory, symbolic links
// resolved: where commands run.
func (f *FS) Root() string { return f.b.root() }

// Close releases the root and kills the exec capability's idle warm
// shells. Later calls fail.
func (f *FS) Close() error {
	if f.exec != nil {
		f.exec.close()
	}
	return f.b.close()
}

func named(name string, e workspace.Entry) workspace.Entry {
	e.Name = path.Base(name)
	return e
}

// Stat implements workspace.Driver; a link inside the root is followed.
func (f *FS) Stat(ctx context.Context, name string) (workspace.Entry, error) {
	if err := ctx.Err(); err != nil {
		return workspace.Entry{}, err
	}
	e, err := f.b.stat(name, true)
	return named(name, e), err
}

// ReadFile implements workspace.Driver.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, workspace.Version, error) {
	b, err := f.ReadData(ctx, name)
	if err != nil {
		return nil, "", err
	}
	return b, workspace.VersionOf(b), nil
}

// ReadData implements workspace.DataReader: the bytes without hashing them.
func (f *FS) ReadData(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.b.readFile(name)
}

// ReadLines implements workspace.LineReader.
func (f *FS) ReadLines(ctx context.Context, name string, offset, limit int) (workspace.LineRange, error) {
	b, err := f.ReadData(ctx, name)
	if err != nil {
		return workspace.LineRange{}, err
	}
	return workspace.SliceLines(b, offset, limit), nil
}

// check returns the content of name if its version is ifVersion (any,
// when empty); a missing file is a conflict for a compare-and-swap and
// empty content otherwise.
func (f *FS) check(name string, ifVersion workspace.Version) ([]byte, error) {
	cur, err := f.b.readFile(name)
	switch {
	case errors.Is(err, fs.ErrNotExist) && ifVersion == "":
		return nil, nil
	case errors.Is(err, fs.ErrNotExist):
		return nil, &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: "(missing)"}
	case err != nil:
		return nil, err
	}
	if v := workspace.VersionOf(cur); ifVersion != "" && v != ifVersion {
		return nil, &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: v}
	}
	return cur, nil
}

// WriteFile implements workspace.Driver.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if ifVersion != "" {
		if _, err := f.check(name, ifVersion); err != nil {
			return "", err
		}
	}
	if err := f.b.writeFile(name, data, false); err != nil {
		return "", err
	}
	return workspace.VersionOf(data), nil
}

// AppendFile implements workspace.Appender: the data is appended in place
// (O_APPEND), not rewritten with the old content.
func (f *FS) AppendFile(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	old, err := f.check(name, ifVersion)
	if err != nil {
		return "", err
	}
	if err := f.b.writeFile(name, data, true); err != nil {
		return "", err
	}
	return workspace.VersionOf(append(old[:len(old):len(old)], data...)), nil
}

// ReadDir implements workspace.Driver: sorted by name; a link is listed
// as workspace.KindLink.
func (f *FS) ReadDir(ctx context.Context, name string) ([]workspace.Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	es, err := f.b.readDir(name)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(es, func(a, b workspace.Entry) int { return strings.Compare(a.Name, b.Name) })
	return es, nil
}

// MkdirAll implements workspace.Driver.
func (f *FS) MkdirAll(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if name == "." {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.mkdirAll(name)
}

// Remove implements workspace.Driver.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.b.removeAll(name)
}

// Rename implements workspace.Driver: everything that would make it fail
// is checked before the missing parents of to are created.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	fe, err := f.b.stat(from, false)
	if err != nil {
		return err
	}
	te, err := f.b.stat(to, false)
	switch {
	case err == nil && te.Kind == workspace.KindDir:
		return workspace.ErrExist
	case err == nil && fe.Kind == workspace.KindDir:
		return workspace.ErrNotDir
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if dir := path.Dir(to); dir != "." {
		if err := f.b.mkdirAll(dir); err != nil {
			return err
		}
	}
	return f.b.rename(from, to)
}

var (
	_ workspace.Driver     = (*FS)(nil)
	_ workspace.Appender   = (*FS)(nil)
	_ workspace.LineReader = (*FS)(nil)
	_ workspace.DataReader = (*FS)(nil)
)
