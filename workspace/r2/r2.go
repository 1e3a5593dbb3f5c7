package r2

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/a3s-lab/code-wasm/workspace"
)

// ListLimit is the page size the driver asks for (R2's maximum).
const ListLimit = 1000

// DefaultScanLimit is how many files a search (grep, glob) looks at
// before it stops and says so in metadata.search.truncated: REFERENCE
// §4's maxObjectsScanned for an object-store workspace, where each file
// read is a GET.
const DefaultScanLimit = 500

// FS is the driver. Its methods are safe for concurrent use: writes are
// serialized by one lock per FS (an object store has no rename or
// directory operations of its own), and compare-and-swap holds across
// writers elsewhere through the ETag condition.
type FS struct {
	b         Bucket
	base      string // "<prefix>/<session>/"
	mu        sync.Mutex
	scanLimit int
}

// New returns a driver over b for one session's files under
// <prefix>/<session>/. prefix and session must be non-empty and contain
// no "/" at either end, no "." or ".." segment and no empty segment.
func New(b Bucket, prefix, session string) (*FS, error) {
	if b == nil {
		return nil, errors.New("r2: nil bucket")
	}
	for _, p := range [][2]string{{"prefix", prefix}, {"session", session}} {
		if err := checkSegment(p[0], p[1]); err != nil {
			return nil, err
		}
	}
	return &FS{b: b, base: prefix + "/" + session + "/", scanLimit: DefaultScanLimit}, nil
}

// SetScanLimit sets how many files a search looks at (DefaultScanLimit
// unless set; 0: no limit). Set it before the driver is in use.
func (f *FS) SetScanLimit(n int) {
	f.scanLimit = max(n, 0)
}

// ScanLimit implements workspace.ScanLimiter.
func (f *FS) ScanLimit() int { return f.scanLimit }

func checkSegment(what, s string) error {
	if s == "" {
		return fmt.Errorf("r2: %s is empty", what)
	}
	for _, seg := range strings.Split(s, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("r2: %s %q has an empty, '.' or '..' segment", what, s)
		}
	}
	return nil
}

// Capabilities implements workspace.Driver: file tools only.
func (f *FS) Capabilities() workspace.Capabilities {
	return workspace.Capabilities{Read: true, Write: true, Search: true}
}

func (f *FS) key(name string) string {
	if name == "." {
		return f.base
	}
	return f.base + name
}

// dirPrefix is the key prefix of everything under directory name.
func (f *FS) dirPrefix(name string) string {
	if name == "." {
		return f.base
	}
	return f.base + name + "/"
}

// isDir reports whether anything (a marker or an object) is under name/.
func (f *FS) isDir(ctx context.Context, name string) (bool, error) {
	if name == "." {
		return true, nil
	}
	p, err := f.b.List(ctx, f.dirPrefix(name), "", "", 1)
	if err != nil {
		return false, err
	}
	return len(p.Objects) > 0, nil
}

// Stat implements workspace.Driver.
func (f *FS) Stat(ctx context.Context, name string) (workspace.Entry, error) {
	if name != "." {
		o, err := f.b.Head(ctx, f.key(name))
		if err == nil {
			return workspace.Entry{Name: path.Base(name), Kind: workspace.KindFile, Size: o.Size, ModTime: o.Uploaded}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return workspace.Entry{}, err
		}
	}
	dir, err := f.isDir(ctx, name)
	if err != nil {
		return workspace.Entry{}, err
	}
	if !dir {
		return workspace.Entry{}, workspace.ErrNotExist
	}
	return workspace.Entry{Name: path.Base(name), Kind: workspace.KindDir}, nil
}

// ReadFile implements workspace.Driver.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, workspace.Version, error) {
	if name == "." {
		return nil, "", workspace.ErrIsDir
	}
	data, _, err := f.b.Get(ctx, f.key(name))
	if errors.Is(err, fs.ErrNotExist) {
		var dir bool
		var derr, perr error
		together(func() { dir, derr = f.isDir(ctx, name) }, func() { perr = f.parentsAreDirs(ctx, name) })
		if derr == nil && dir {
			return nil, "", workspace.ErrIsDir
		}
		if perr != nil {
			return nil, "", perr
		}
		return nil, "", workspace.ErrNotExist
	}
	if err != nil {
		return nil, "", err
	}
	return data, workspace.VersionOf(data), nil
}

// parentsAreDirs fails with ErrNotDir when an ancestor of name is a file.
// It asks about every ancestor at once.
func (f *FS) parentsAreDirs(ctx context.Context, name string) error {
	var heads []func()
	var errs []error
	for d := path.Dir(name); d != "."; d = path.Dir(d) {
		i := len(heads)
		errs = append(errs, nil)
		heads = append(heads, func() { _, errs[i] = f.b.Head(ctx, f.key(d)) })
	}
	together(heads...)
	for _, err := range errs {
		if err == nil {
			return workspace.ErrNotDir
		}
	}
	for _, err := range errs {
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// together runs fns at once and returns when all have: requests that do
// not depend on each other then cost one round trip to the bucket, not
// one each (on Workers every request crosses to R2 and back).
func together(fns ...func()) {
	if len(fns) == 0 {
		return
	}
	var wg sync.WaitGroup
	wg.Add(len(fns) - 1)
	for _, fn := range fns[1:] {
		go func() {
			defer wg.Done()
			fn()
		}()
	}
	fns[0]()
	wg.Wait()
}

// WriteFile implements workspace.Driver. With ifVersion, the put is
// conditional on the ETag of the content that was compared.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.write(ctx, name, data, ifVersion)
}

func (f *FS) write(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	var dir bool
	var perr, derr, err error
	var cur []byte
	var o Object
	checks := []func(){func() { perr = f.parentsAreDirs(ctx, name) }, func() { dir, derr = f.isDir(ctx, name) }}
	if ifVersion != "" {
		// The content to compare is fetched with the checks: one round
		// trip before the put, not two.
		checks = append(checks, func() { cur, o, err = f.b.Get(ctx, f.key(name)) })
	}
	together(checks...)
	if perr != nil {
		return "", perr
	}
	if derr != nil {
		return "", derr
	} else if dir {
		return "", workspace.ErrIsDir
	}
	etag := ""
	if ifVersion != "" {
		if errors.Is(err, fs.ErrNotExist) {
			return "", &workspace.ConflictError{Path: name, Expected: ifVersion}
		}
		if err != nil {
			return "", err
		}
		if v := workspace.VersionOf(cur); v != ifVersion {
			return "", &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: v}
		}
		etag = o.ETag
	}
	if _, err := f.b.Put(ctx, f.key(name), data, etag); errors.Is(err, ErrPrecondition) {
		actual := workspace.Version("")
		if cur, _, gerr := f.b.Get(ctx, f.key(name)); gerr == nil {
			actual = workspace.VersionOf(cur)
		}
		return "", &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: actual}
	} else if err != nil {
		return "", err
	}
	return workspace.VersionOf(data), nil
}

// listAll lists every object under prefix (no delimiter), page by page.
func (f *FS) listAll(ctx context.Context, prefix string) ([]Object, error) {
	var out []Object
	cursor := ""
	for {
		p, err := f.b.List(ctx, prefix, "", cursor, ListLimit)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Objects...)
		if !p.Truncated {
			return out, nil
		}
		cursor = p.Cursor
	}
}

// ReadDir implements workspace.Driver: one delimited listing. Below the
// root, whether name is a file and its first page are asked at once; the
// ancestors only when nothing is there (a walk lists many directories
// that exist, and their ancestors need no asking).
func (f *FS) ReadDir(ctx context.Context, name string) ([]workspace.Entry, error) {
	prefix := f.dirPrefix(name)
	var p Page
	var err error
	list := func() { p, err = f.b.List(ctx, prefix, "/", "", ListLimit) }
	if name == "." {
		list()
	} else {
		var herr error
		together(list, func() { _, herr = f.b.Head(ctx, f.key(name)) })
		if herr == nil {
			return nil, workspace.ErrNotDir
		} else if !errors.Is(herr, fs.ErrNotExist) {
			return nil, herr
		}
	}
	var out []workspace.Entry
	any := false
	for {
		if err != nil {
			return nil, err
		}
		for _, o := range p.Objects {
			any = true
			if o.Key == prefix { // the directory's own marker
				continue
			}
			out = append(out, workspace.Entry{Name: o.Key[len(prefix):], Kind: workspace.KindFile, Size: o.Size, ModTime: o.Uploaded})
		}
		for _, d := range p.Prefixes {
			any = true
			out = append(out, workspace.Entry{Name: strings.TrimSuffix(d[len(prefix):], "/"), Kind: workspace.KindDir})
		}
		if !p.Truncated {
			break
		}
		p, err = f.b.List(ctx, prefix, "/", p.Cursor, ListLimit)
	}
	if !any && name != "." {
		if err := f.parentsAreDirs(ctx, name); err != nil {
			return nil, err
		}
		return nil, workspace.ErrNotExist
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// MkdirAll implements workspace.Driver: a marker object <name>/.
func (f *FS) MkdirAll(ctx context.Context, name string) error {
	if name == "." {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for d := name; d != "."; d = path.Dir(d) {
		if _, err := f.b.Head(ctx, f.key(d)); err == nil {
			return workspace.ErrNotDir
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	if dir, err := f.isDir(ctx, name); err != nil || dir {
		return err
	}
	_, err := f.b.Put(ctx, f.dirPrefix(name), nil, "")
	return err
}

// Remove implements workspace.Driver.
func (f *FS) Remove(ctx context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, err := f.b.Head(ctx, f.key(name)); err == nil {
		if err := f.keepParent(ctx, name); err != nil {
			return err
		}
		return f.b.Delete(ctx, f.key(name))
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	objs, err := f.listAll(ctx, f.dirPrefix(name))
	if err != nil {
		return err
	}
	if len(objs) == 0 {
		return workspace.ErrNotExist
	}
	if err := f.keepParent(ctx, name); err != nil {
		return err
	}
	keys := make([]string, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	return f.b.Delete(ctx, keys...)
}

// Rename implements workspace.Driver: copy then delete (the store has no
// rename). Every check runs before the first copy.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	src, err := f.Stat(ctx, from)
	if err != nil {
		return err
	}
	if err := f.parentsAreDirs(ctx, to); err != nil {
		return err
	}
	dst, err := f.Stat(ctx, to)
	switch {
	case err == nil && dst.Kind == workspace.KindDir:
		return workspace.ErrExist
	case err == nil && src.Kind == workspace.KindDir:
		return workspace.ErrNotDir
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	if err := f.keepParent(ctx, from); err != nil {
		return err
	}
	if src.Kind == workspace.KindFile {
		data, _, err := f.b.Get(ctx, f.key(from))
		if err != nil {
			return err
		}
		if _, err := f.b.Put(ctx, f.key(to), data, ""); err != nil {
			return err
		}
		return f.b.Delete(ctx, f.key(from))
	}
	objs, err := f.listAll(ctx, f.dirPrefix(from))
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		data, _, err := f.b.Get(ctx, o.Key)
		if err != nil {
			return err
		}
		if _, err := f.b.Put(ctx, f.dirPrefix(to)+o.Key[len(f.dirPrefix(from)):], data, ""); err != nil {
			return err
		}
		keys = append(keys, o.Key)
	}
	return f.b.Delete(ctx, keys...)
}

// keepParent gives name's parent a marker, so the directory outlives the
// removal or move of its last entry (a directory is only a key prefix).
func (f *FS) keepParent(ctx context.Context, name string) error {
	d := path.Dir(name)
	if d == "." {
		return nil
	}
	if _, err := f.b.Head(ctx, f.dirPrefix(d)); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, err := f.b.Put(ctx, f.dirPrefix(d), nil, "")
	return err
}
