package opfs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// File is what the driver needs of one storage file: the operations of a
// FileSystemSyncAccessHandle.
type File interface {
	io.ReaderAt
	io.WriterAt
	Size() (int64, error)
	Truncate(size int64) error
	// Flush makes every completed write durable.
	Flush() error
	Close() error
}

// DirEntry is one entry of a Dir.
type DirEntry struct {
	Name string
	File bool // a file (else a directory)
}

// Dir is the directory holding a root's log generations.
type Dir interface {
	// List returns the directory's entries: its files, and anything else
	// in it (a subdirectory) with File unset.
	List(ctx context.Context) ([]DirEntry, error)
	// Open opens a file, creating it when create is set; fs.ErrNotExist if
	// it is missing and create is not set.
	Open(ctx context.Context, name string, create bool) (File, error)
	// Remove deletes a file; a missing file is not an error.
	Remove(ctx context.Context, name string) error
}

// MemDir is an in-memory Dir. Its files keep their bytes after Close, so a
// test can reopen a root, and Crash can cut a file short as a crash would.
type MemDir struct {
	mu    sync.Mutex
	files map[string]*memData
	dirs  map[string]bool // subdirectories (Mkdir): listed, never opened
}

type memData struct {
	mu   sync.Mutex
	b    []byte
	open bool
}

// NewMemDir returns an empty MemDir.
func NewMemDir() *MemDir { return &MemDir{files: map[string]*memData{}} }

// List implements Dir.
func (d *MemDir) List(ctx context.Context) ([]DirEntry, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]DirEntry, 0, len(d.files)+len(d.dirs))
	for n := range d.files {
		out = append(out, DirEntry{Name: n, File: true})
	}
	for n := range d.dirs {
		out = append(out, DirEntry{Name: n})
	}
	slices.SortFunc(out, func(a, b DirEntry) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Mkdir adds a subdirectory, as something other than the driver could
// leave in a root's directory.
func (d *MemDir) Mkdir(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs == nil {
		d.dirs = map[string]bool{}
	}
	d.dirs[name] = true
}

// Open implements Dir. Like a sync access handle, a file can be open only
// once at a time; a subdirectory cannot be opened (OPFS: TypeMismatchError).
func (d *MemDir) Open(ctx context.Context, name string, create bool) (File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs[name] {
		return nil, fmt.Errorf("%s is a directory", name)
	}
	m, ok := d.files[name]
	if !ok {
		if !create {
			return nil, fs.ErrNotExist
		}
		m = &memData{}
		d.files[name] = m
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.open {
		return nil, fmt.Errorf("%s is open elsewhere", name)
	}
	m.open = true
	return &memFile{m: m}, nil
}

// Remove implements Dir. A subdirectory is not removed (OPFS refuses a
// non-empty one without the recursive option, which the driver never
// passes).
func (d *MemDir) Remove(ctx context.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.dirs[name] {
		return fmt.Errorf("%s is a directory", name)
	}
	delete(d.files, name)
	return nil
}

// Bytes returns a copy of a file's content (nil if missing).
func (d *MemDir) Bytes(name string) []byte {
	d.mu.Lock()
	m := d.files[name]
	d.mu.Unlock()
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.b)
}

// SetBytes replaces a file's content, as a crash that kept only part of
// the writes would leave it.
func (d *MemDir) SetBytes(name string, b []byte) {
	d.mu.Lock()
	m := d.files[name]
	if m == nil {
		m = &memData{}
		d.files[name] = m
	}
	d.mu.Unlock()
	m.mu.Lock()
	m.b = slices.Clone(b)
	m.mu.Unlock()
}

// Release forgets that files are open, as a closed tab does.
func (d *MemDir) Release() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, m := range d.files {
		m.mu.Lock()
		m.open = false
		m.mu.Unlock()
	}
}

type memFile struct {
	m      *memData
	closed bool
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if off >= int64(len(f.m.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.m.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return 0, fs.ErrClosed
	}
	if end := off + int64(len(p)); end > int64(len(f.m.b)) {
		f.m.b = append(f.m.b, make([]byte, end-int64(len(f.m.b)))...)
	}
	return copy(f.m.b[off:], p), nil
}

func (f *memFile) Size() (int64, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	return int64(len(f.m.b)), nil
}

func (f *memFile) Truncate(size int64) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if size < int64(len(f.m.b)) {
		f.m.b = f.m.b[:size]
	} else {
		f.m.b = append(f.m.b, make([]byte, size-int64(len(f.m.b)))...)
	}
	return nil
}

func (f *memFile) Flush() error { return nil }

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if !f.closed {
		f.closed = true
		f.m.open = false
	}
	return nil
}
