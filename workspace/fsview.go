package workspace

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"strings"
	"time"
)

// FS returns a read-only io/fs view of the workspace, for code written
// against io/fs (fs.WalkDir, fs.Glob, template.ParseFS, testing/fstest).
// It implements fs.FS, fs.ReadDirFS, fs.ReadFileFS and fs.StatFS.
//
// Names follow io/fs (fs.ValidPath): slash-separated, no "." or ".."
// elements, "." for the root. A "\" is part of a name there, never a
// separator, and since no workspace name can hold one such names do not
// exist. Errors are *fs.PathError carrying the driver's error, so
// errors.Is(err, fs.ErrNotExist) works.
//
// io/fs has no context, so the view carries ctx for every call it makes:
// create it per operation, do not keep it past ctx's life.
func (w *Workspace) FS(ctx context.Context) fs.FS { return &fsView{w: w, ctx: ctx} }

type fsView struct {
	w   *Workspace
	ctx context.Context
}

var (
	_ fs.ReadDirFS  = (*fsView)(nil)
	_ fs.ReadFileFS = (*fsView)(nil)
	_ fs.StatFS     = (*fsView)(nil)
)

func (v *fsView) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if strings.Contains(name, `\`) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	if r, err := Resolve(name); err != nil || r != name {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

// fsErr re-labels a workspace error in io/fs terms.
func fsErr(op, name string, err error) error {
	var pe *PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

func (v *fsView) Stat(name string) (fs.FileInfo, error) {
	if err := v.check("stat", name); err != nil {
		return nil, err
	}
	e, err := v.w.Stat(v.ctx, name)
	if err != nil {
		return nil, fsErr("stat", name, err)
	}
	return fileInfo(e), nil
}

func (v *fsView) ReadFile(name string) ([]byte, error) {
	if err := v.check("readfile", name); err != nil {
		return nil, err
	}
	b, _, err := v.w.ReadFile(v.ctx, name)
	if err != nil {
		return nil, fsErr("readfile", name, err)
	}
	return bytes.Clone(b), nil
}

func (v *fsView) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := v.check("readdir", name); err != nil {
		return nil, err
	}
	es, err := v.w.ReadDir(v.ctx, name)
	if err != nil {
		return nil, fsErr("readdir", name, err)
	}
	return dirEntries(es), nil
}

func (v *fsView) Open(name string) (fs.File, error) {
	if err := v.check("open", name); err != nil {
		return nil, err
	}
	e, err := v.w.Stat(v.ctx, name)
	if err != nil {
		return nil, fsErr("open", name, err)
	}
	if e.Kind == KindDir {
		return &dirFile{v: v, name: name, info: fileInfo(e)}, nil
	}
	b, _, err := v.w.ReadFile(v.ctx, name)
	if err != nil {
		return nil, fsErr("open", name, err)
	}
	e.Size = int64(len(b)) // the bytes read win over an older Stat
	return &file{Reader: bytes.NewReader(b), info: fileInfo(e)}, nil
}

func dirEntries(es []Entry) []fs.DirEntry {
	out := make([]fs.DirEntry, len(es))
	for i, e := range es {
		out[i] = fs.FileInfoToDirEntry(fileInfo(e))
	}
	return out
}

// file serves the bytes read at Open; the driver's slice is only read.
type file struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *file) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *file) Close() error               { return nil }

// dirFile lists its directory on the first ReadDir call.
type dirFile struct {
	v       *fsView
	name    string
	info    fs.FileInfo
	entries []fs.DirEntry
	listed  bool
}

func (d *dirFile) Stat() (fs.FileInfo, error) { return d.info, nil }
func (d *dirFile) Close() error               { return nil }
func (d *dirFile) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.name, Err: ErrIsDir}
}

func (d *dirFile) ReadDir(n int) ([]fs.DirEntry, error) {
	if !d.listed {
		es, err := d.v.w.ReadDir(d.v.ctx, d.name)
		if err != nil {
			return nil, fsErr("readdir", d.name, err)
		}
		d.entries, d.listed = dirEntries(es), true
	}
	if n <= 0 {
		out := d.entries
		d.entries = nil
		if out == nil {
			out = []fs.DirEntry{}
		}
		return out, nil
	}
	if len(d.entries) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(d.entries))
	out := d.entries[:n:n]
	d.entries = d.entries[n:]
	return out, nil
}

type info struct{ e Entry }

func fileInfo(e Entry) fs.FileInfo { return info{e} }

func (i info) Name() string       { return i.e.Name }
func (i info) Size() int64        { return i.e.Size }
func (i info) ModTime() time.Time { return i.e.ModTime }
func (i info) IsDir() bool        { return i.e.Kind == KindDir }
func (i info) Sys() any           { return nil }
func (i info) Mode() fs.FileMode {
	switch i.e.Kind {
	case KindDir:
		return fs.ModeDir | 0o755
	case KindFile:
		return 0o644
	case KindLink:
		return fs.ModeSymlink | 0o777
	default:
		return fs.ModeIrregular | 0o644
	}
}
