//go:build !js

package dirfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"syscall"

	"github.com/a3s-lab/code-wasm/workspace"
)

// Open returns a driver over the directory root, which must exist. Every
// file is opened through an os.Root on it, so nothing outside root is
// read, written or created: not through "..", nor a symbolic link, nor a
// link swapped in while a call runs.
func Open(root string) (*FS, error) {
	abs, err := filepath.Abs(root)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("dirfs: the root %q does not exist", root)
		}
		return nil, fmt.Errorf("dirfs: the root %q: %w", root, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("dirfs: the root %q is not a directory", root)
	}
	r, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("dirfs: the root %q: %w", root, err)
	}
	return newFS(&osBackend{r: r, path: abs}), nil
}

// osBackend is the native backend: os.Root.
type osBackend struct {
	r    *os.Root
	path string
}

func (o *osBackend) root() string { return o.path }
func (o *osBackend) close() error { return o.r.Close() }

func entry(fi fs.FileInfo) workspace.Entry {
	e := workspace.Entry{Name: fi.Name(), ModTime: fi.ModTime()}
	switch m := fi.Mode(); {
	case m.IsDir():
		e.Kind = workspace.KindDir
	case m.IsRegular():
		e.Kind, e.Size = workspace.KindFile, fi.Size()
	case m&fs.ModeSymlink != 0:
		e.Kind, e.Size = workspace.KindLink, fi.Size()
	default:
		e.Kind = workspace.KindUnknown
	}
	return e
}

func (o *osBackend) stat(name string, follow bool) (workspace.Entry, error) {
	var fi fs.FileInfo
	var err error
	if follow {
		fi, err = o.r.Stat(name)
	} else {
		fi, err = o.r.Lstat(name)
	}
	if err != nil {
		return workspace.Entry{}, mapErr(err)
	}
	return entry(fi), nil
}

func (o *osBackend) readFile(name string) ([]byte, error) {
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	f, err := o.r.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, mapErr(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, mapErr(err)
	case fi.IsDir():
		return nil, workspace.ErrIsDir
	case !fi.Mode().IsRegular():
		return nil, errNotRegular
	}
	// The size fstat gave is read in one call; a file that grows since
	// is read on to its end.
	size := fi.Size()
	b := make([]byte, 0, size+1)
	for {
		n, err := f.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF || err == nil && n > 0 && int64(len(b)) == size {
			return b, nil
		}
		if err != nil {
			return nil, mapErr(err)
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // the file grew: more room
		}
	}
}

func (o *osBackend) writeFile(name string, data []byte, add bool) error {
	if dir := path.Dir(name); dir != "." {
		if err := o.mkdirAll(dir); err != nil {
			return err
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | syscall.O_NONBLOCK
	if add {
		flags |= os.O_APPEND
	}
	f, err := o.r.OpenFile(name, flags, 0o644)
	if err != nil {
		return mapErr(err)
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = errNotRegular
	}
	if err == nil && !add {
		err = f.Truncate(0) // only now that it is known to be a regular file in the root
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return mapErr(err)
}

func (o *osBackend) readDir(name string) ([]workspace.Entry, error) {
	// Entries are described through a Root on the directory itself: each
	// is one fstatat on its descriptor, never a path from the top.
	sub, err := o.r.OpenRoot(name)
	if err != nil {
		return nil, mapErr(err)
	}
	defer sub.Close()
	d, err := sub.Open(".")
	if err != nil {
		return nil, mapErr(err)
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, mapErr(err)
	}
	es := make([]workspace.Entry, 0, len(names))
	for _, n := range names {
		fi, err := sub.Lstat(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since it was listed
		}
		if err != nil {
			return nil, mapErr(err)
		}
		es = append(es, entry(fi))
	}
	return es, nil
}

// mkdirAll: a component that exists and is not a directory is ErrNotDir.
func (o *osBackend) mkdirAll(name string) error {
	err := mapErr(o.r.MkdirAll(name, 0o755))
	if errors.Is(err, workspace.ErrExist) {
		return workspace.ErrNotDir
	}
	return err
}

func (o *osBackend) removeAll(name string) error {
	if _, err := o.r.Lstat(name); err != nil {
		return mapErr(err)
	}
	return mapErr(o.r.RemoveAll(name))
}

func (o *osBackend) rename(from, to string) error { return mapErr(o.r.Rename(from, to)) }

// mapErr turns an os error into the workspace's sentinel, without the
// path (the workspace names it once).
func mapErr(err error) error {
	if err == nil {
		return nil
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		switch e.Error() { // os.Root's own errors, unexported
		case "path escapes from parent":
			return errEscape
		case "not a directory":
			return workspace.ErrNotDir
		}
	}
	var errno syscall.Errno
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return workspace.ErrNotExist
	case errors.As(err, &errno) && errno == syscall.ENOTDIR:
		return workspace.ErrNotDir
	case errors.As(err, &errno) && errno == syscall.EISDIR:
		return workspace.ErrIsDir
	case errors.As(err, &errno) && (errno == syscall.EEXIST || errno == syscall.ENOTEMPTY):
		return workspace.ErrExist
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
