package opfs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"slices"
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

// Dir is the directory holding a root's log generations.
type Dir interface {
	// List returns the names of the files in the directory.
	List(ctx context.Context) ([]string, error)
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
}

type memData struct {
	mu   sync.Mutex
	b    []byte
	open bool
}

// NewMemDir returns an empty MemDir.
func NewMemDir() *MemDir { return &MemDir{files: map[string]*memData{}} }

// List implements Dir.
func (d *MemDir) List(ctx context.Context) ([]string, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.files))
	for n := range d.files {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// Open implements Dir. Like a sync access handle, a file can be open only
// once at a time.
func (d *MemDir) Open(ctx context.Context, name string, create bool) (File, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
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

// Remove implements Dir.
func (d *MemDir) Remove(ctx context.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
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
