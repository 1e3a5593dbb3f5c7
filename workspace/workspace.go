package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Workspace is the portable type tools hold. It resolves and checks every
// path once, checks capabilities, wraps driver errors once in a *PathError,
// and supplies fallbacks for the optional driver extras.
type Workspace struct {
	d    Driver
	caps Capabilities
}

// New wraps a driver. It returns an error for a nil driver.
func New(d Driver) (*Workspace, error) {
	if d == nil {
		return nil, errors.New("workspace: nil driver")
	}
	return &Workspace{d: d, caps: d.Capabilities()}, nil
}

// Capabilities reports what the driver declared.
func (w *Workspace) Capabilities() Capabilities { return w.caps }

// Driver returns the underlying driver.
func (w *Workspace) Driver() Driver { return w.d }

func (w *Workspace) resolve(op, p string) (string, error) {
	r, err := Resolve(p)
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	return r, nil
}

func (w *Workspace) need(op, p string, ok bool, what string) error {
	if !ok {
		return &PathError{Op: op, Path: p, Err: fmt.Errorf("%w: %s", ErrUnsupported, what)}
	}
	return nil
}

func wrap(op, p string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &PathError{Op: op, Path: p, Err: err}
}

// Stat describes one path.
func (w *Workspace) Stat(ctx context.Context, p string) (Entry, error) {
	name, err := w.resolve("stat", p)
	if err != nil {
		return Entry{}, err
	}
	if err := w.need("stat", name, w.caps.Read, "read"); err != nil {
		return Entry{}, err
	}
	e, err := w.d.Stat(ctx, name)
	return e, wrap("stat", name, err)
}

// ReadFile returns a file's bytes and version. The slice must not be
// modified.
func (w *Workspace) ReadFile(ctx context.Context, p string) ([]byte, Version, error) {
	name, err := w.resolve("read", p)
	if err != nil {
		return nil, "", err
	}
	if err := w.need("read", name, w.caps.Read, "read"); err != nil {
		return nil, "", err
	}
	b, v, err := w.d.ReadFile(ctx, name)
	return b, v, wrap("read", name, err)
}

// ReadLines reads limit lines from a 0-based line offset. limit <= 0 means
// to the end. It uses the driver's LineReader when there is one.
func (w *Workspace) ReadLines(ctx context.Context, p string, offset, limit int) (LineRange, error) {
	name, err := w.resolve("read", p)
	if err != nil {
		return LineRange{}, err
	}
	if err := w.need("read", name, w.caps.Read, "read"); err != nil {
		return LineRange{}, err
	}
	if offset < 0 {
		return LineRange{}, &PathError{Op: "read", Path: name, Err: fmt.Errorf("negative line offset %d", offset)}
	}
	if lr, ok := w.d.(LineReader); ok {
		r, err := lr.ReadLines(ctx, name, offset, limit)
		return r, wrap("read", name, err)
	}
	b, _, err := w.d.ReadFile(ctx, name)
	if err != nil {
		return LineRange{}, wrap("read", name, err)
	}
	return SliceLines(b, offset, limit), nil
}

// SliceLines cuts lines [offset, offset+limit) out of data; limit <= 0
// means to the end. Lines end at "\n"; a "\r" before it is dropped. A final
// line without a newline counts as a line. Drivers use it to implement
// LineReader over bytes they already hold.
func SliceLines(data []byte, offset, limit int) LineRange {
	r := LineRange{Offset: offset}
	i, line := 0, 0
	for i < len(data) {
		j := bytes.IndexByte(data[i:], '\n')
		end, next := len(data), len(data)
		if j >= 0 {
			end, next = i+j, i+j+1
		}
		if line >= offset && (limit <= 0 || line < offset+limit) {
			s := data[i:end]
			if len(s) > 0 && s[len(s)-1] == '\r' {
				s = s[:len(s)-1]
			}
			r.Lines = append(r.Lines, string(s))
		}
		line++
		i = next
	}
	r.TotalLines = line
	r.EOF = offset+len(r.Lines) >= line
	return r
}

// WriteFile replaces (or creates) a file, creating parent directories.
func (w *Workspace) WriteFile(ctx context.Context, p string, data []byte) (Version, error) {
	name, err := w.resolve("write", p)
	if err != nil {
		return "", err
	}
	if err := w.need("write", name, w.caps.Write, "write"); err != nil {
		return "", err
	}
	if name == "." {
		return "", &PathError{Op: "write", Path: name, Err: ErrIsDir}
	}
	v, err := w.d.WriteFile(ctx, name, data, "")
	return v, wrap("write", name, err)
}

// WriteFileIfVersion writes only if the file's current version is v. An
// empty v is refused: use WriteFile for an unconditional write.
func (w *Workspace) WriteFileIfVersion(ctx context.Context, p string, data []byte, v Version) (Version, error) {
	name, err := w.resolve("write", p)
	if err != nil {
		return "", err
	}
	if err := w.need("write", name, w.caps.Write, "write"); err != nil {
		return "", err
	}
	if v == "" {
		return "", &PathError{Op: "write", Path: name, Err: errors.New("empty version token: a compare-and-swap write needs the version from a read")}
	}
	nv, err := w.d.WriteFile(ctx, name, data, v)
	return nv, wrap("write", name, err)
}

// AppendFile adds data to the end of a file whose current version is v
// (empty v: unconditional; a missing file is created).
func (w *Workspace) AppendFile(ctx context.Context, p string, data []byte, v Version) (Version, error) {
	name, err := w.resolve("append", p)
	if err != nil {
		return "", err
	}
	if err := w.need("append", name, w.caps.Write, "write"); err != nil {
		return "", err
	}
	if a, ok := w.d.(Appender); ok {
		nv, err := a.AppendFile(ctx, name, data, v)
		return nv, wrap("append", name, err)
	}
	old, cur, err := w.d.ReadFile(ctx, name)
	switch {
	case errors.Is(err, fs.ErrNotExist) && v == "":
		old = nil
	case err != nil:
		return "", wrap("append", name, err)
	case v != "" && cur != v:
		return "", &PathError{Op: "append", Path: name, Err: &ConflictError{Path: name, Expected: v, Actual: cur}}
	}
	buf := make([]byte, 0, len(old)+len(data))
	buf = append(append(buf, old...), data...)
	nv, err := w.d.WriteFile(ctx, name, buf, cur)
	return nv, wrap("append", name, err)
}

// ReadDir lists one directory, sorted by name.
func (w *Workspace) ReadDir(ctx context.Context, p string) ([]Entry, error) {
	name, err := w.resolve("readdir", p)
	if err != nil {
		return nil, err
	}
	if err := w.need("readdir", name, w.caps.Read, "read"); err != nil {
		return nil, err
	}
	es, err := w.d.ReadDir(ctx, name)
	return es, wrap("readdir", name, err)
}

// MkdirAll creates a directory and its parents.
func (w *Workspace) MkdirAll(ctx context.Context, p string) error {
	name, err := w.resolve("mkdir", p)
	if err != nil {
		return err
	}
	if err := w.need("mkdir", name, w.caps.Write, "write"); err != nil {
		return err
	}
	return wrap("mkdir", name, w.d.MkdirAll(ctx, name))
}

// Remove deletes a file or a directory tree. The root cannot be removed.
func (w *Workspace) Remove(ctx context.Context, p string) error {
	name, err := w.resolve("remove", p)
	if err != nil {
		return err
	}
	if err := w.need("remove", name, w.caps.Write, "write"); err != nil {
		return err
	}
	if name == "." {
		return &PathError{Op: "remove", Path: name, Err: errors.New("cannot remove the workspace root")}
	}
	return wrap("remove", name, w.d.Remove(ctx, name))
}

// Rename moves a file or directory.
func (w *Workspace) Rename(ctx context.Context, from, to string) error {
	f, err := w.resolve("rename", from)
	if err != nil {
		return err
	}
	t, err := w.resolve("rename", to)
	if err != nil {
		return err
	}
	if err := w.need("rename", f, w.caps.Write, "write"); err != nil {
		return err
	}
	if f == "." || t == "." {
		return &PathError{Op: "rename", Path: f, Err: errors.New("cannot rename the workspace root")}
	}
	if t == f || strings.HasPrefix(t, f+"/") {
		if t == f {
			return nil
		}
		return &PathError{Op: "rename", Path: f, Err: errors.New("cannot move a directory inside itself")}
	}
	return wrap("rename", f, w.d.Rename(ctx, f, t))
}

// Walk visits every entry under p in lexical order, directories before
// their contents; the root itself is not visited. Paths given to fn are
// root-relative (not relative to p).
func (w *Workspace) Walk(ctx context.Context, p string, fn WalkFunc) error {
	name, err := w.resolve("walk", p)
	if err != nil {
		return err
	}
	if err := w.need("walk", name, w.caps.Read, "read"); err != nil {
		return err
	}
	if wk, ok := w.d.(Walker); ok {
		err := wk.Walk(ctx, name, fn)
		if errors.Is(err, fs.SkipAll) {
			return nil
		}
		return wrap("walk", name, err)
	}
	err = w.walkDir(ctx, name, fn)
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return wrap("walk", name, err)
}

func (w *Workspace) walkDir(ctx context.Context, dir string, fn WalkFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	es, err := w.d.ReadDir(ctx, dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		p := e.Name
		if dir != "." {
			p = dir + "/" + e.Name
		}
		err := fn(p, e)
		if e.Kind == KindDir {
			if errors.Is(err, fs.SkipDir) {
				continue
			}
			if err != nil {
				return err
			}
			if err := w.walkDir(ctx, p, fn); err != nil {
				return err
			}
			continue
		}
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Join is path.Join for resolved workspace paths ("." is the root).
func Join(dir, name string) string {
	if dir == "." || dir == "" {
		return name
	}
	return path.Join(dir, name)
}
