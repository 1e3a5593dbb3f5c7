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

// resolve checks a path once for every operation. A call whose context is
// already done fails here, before the driver is asked anything.
func (w *Workspace) resolve(ctx context.Context, op, p string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	r, err := Resolve(p)
	if err != nil {
		return "", &PathError{Op: op, Path: p, Err: err}
	}
	return r, nil
}

// resolveFile is resolve for an operation that creates or changes a file:
// ResolveFile's rules (no directory-shaped path, not the root) apply.
func (w *Workspace) resolveFile(ctx context.Context, op, p string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	return ResolveFile(op, p)
}

// resolveRead is resolve for reading a file. A path written as a directory
// ("a.txt/") that resolves to a file is ErrNotDir, as open(2) says; to a
// directory, ErrIsDir; missing, ErrNotExist. Those fail here; a nil error
// means the driver may read name.
func (w *Workspace) resolveRead(ctx context.Context, op, p string) (string, error) {
	name, err := w.resolve(ctx, op, p)
	if err != nil || name == "." || dirSuffix(p) == "" {
		return name, err
	}
	if err := w.need(op, name, w.caps.Read, "read"); err != nil {
		return "", err
	}
	e, err := w.d.Stat(ctx, name)
	switch {
	case err != nil:
		return "", wrap(op, p, err)
	case e.Kind == KindDir:
		return "", &PathError{Op: op, Path: p, Err: ErrIsDir}
	}
	return "", &PathError{Op: op, Path: p, Err: fmt.Errorf("%w: the path ends with '%s' but %s is a file", ErrNotDir, dirSuffix(p), Display(name))}
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
	name, err := w.resolve(ctx, "stat", p)
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
// modified. A path written as a directory ("a.txt/") that names a file is
// ErrNotDir, as in POSIX; ReadLines does the same.
func (w *Workspace) ReadFile(ctx context.Context, p string) ([]byte, Version, error) {
	name, err := w.resolveRead(ctx, "read", p)
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
	name, err := w.resolveRead(ctx, "read", p)
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
// The driver may keep data: do not modify it after the call. A path written
// as a directory ("x/", "x/.") or the root is refused (ResolveFile); so it
// is by every operation that writes a file.
func (w *Workspace) WriteFile(ctx context.Context, p string, data []byte) (Version, error) {
	name, err := w.resolveFile(ctx, "write", p)
	if err != nil {
		return "", err
	}
	if err := w.need("write", name, w.caps.Write, "write"); err != nil {
		return "", err
	}
	v, err := w.d.WriteFile(ctx, name, data, "")
	return v, wrap("write", name, err)
}

// PutFile is WriteFile without the new version: drivers that implement
// Putter (memfs) then hash the content only when a read or a
// compare-and-swap first needs it. Use it to load many files at once.
func (w *Workspace) PutFile(ctx context.Context, p string, data []byte) error {
	name, err := w.resolveFile(ctx, "write", p)
	if err != nil {
		return err
	}
	if err := w.need("write", name, w.caps.Write, "write"); err != nil {
		return err
	}
	if pt, ok := w.d.(Putter); ok {
		return wrap("write", name, pt.PutFile(ctx, name, data))
	}
	_, err = w.d.WriteFile(ctx, name, data, "")
	return wrap("write", name, err)
}

// WriteFileIfVersion writes only if the file's current version is v (a
// missing file is a conflict). An empty v is refused: use WriteFile for an
// unconditional write. As with WriteFile, data must not be modified after.
func (w *Workspace) WriteFileIfVersion(ctx context.Context, p string, data []byte, v Version) (Version, error) {
	name, err := w.resolveFile(ctx, "write", p)
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
	name, err := w.resolveFile(ctx, "append", p)
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
	// Fallback: read, then compare-and-swap the longer content. An
	// unconditional append retries when another writer got in between, so
	// no concurrent append is lost; a conditional one reports the conflict.
	for {
		old, cur, err := w.d.ReadFile(ctx, name)
		switch {
		case errors.Is(err, fs.ErrNotExist) && v == "":
			old = nil
		case errors.Is(err, fs.ErrNotExist):
			return "", &PathError{Op: "append", Path: name, Err: &ConflictError{Path: name, Expected: v, Actual: "(missing)"}}
		case err != nil:
			return "", wrap("append", name, err)
		case v != "" && cur != v:
			return "", &PathError{Op: "append", Path: name, Err: &ConflictError{Path: name, Expected: v, Actual: cur}}
		}
		buf := make([]byte, 0, len(old)+len(data))
		buf = append(append(buf, old...), data...)
		nv, err := w.d.WriteFile(ctx, name, buf, cur)
		if v == "" && cur != "" && errors.Is(err, ErrConflict) {
			continue
		}
		return nv, wrap("append", name, err)
	}
}

// ReadDir lists one directory, sorted by name.
func (w *Workspace) ReadDir(ctx context.Context, p string) ([]Entry, error) {
	name, err := w.resolve(ctx, "readdir", p)
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
	name, err := w.resolve(ctx, "mkdir", p)
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
	name, err := w.resolve(ctx, "remove", p)
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
	f, err := w.resolve(ctx, "rename", from)
	if err != nil {
		return err
	}
	t, err := w.resolve(ctx, "rename", to)
	if err != nil {
		return err
	}
	if err := w.need("rename", f, w.caps.Write, "write"); err != nil {
		return err
	}
	if f == "." || t == "." {
		return &PathError{Op: "rename", Path: f, Err: errors.New("cannot rename the workspace root")}
	}
	if t == f {
		// Nothing to move, but a missing source is still an error.
		_, err := w.d.Stat(ctx, f)
		return wrap("rename", f, err)
	}
	if strings.HasPrefix(t, f+"/") {
		e, err := w.d.Stat(ctx, f)
		switch {
		case err != nil:
			return wrap("rename", f, err)
		case e.Kind != KindDir:
			return &PathError{Op: "rename", Path: t, Err: ErrNotDir} // its parent would be the file
		}
		return &PathError{Op: "rename", Path: f, Err: errors.New("cannot move a directory inside itself")}
	}
	return wrap("rename", f, w.d.Rename(ctx, f, t))
}

// Walk visits every entry under p in lexical order, directories before
// their contents; p itself is not visited, and a file p is ErrNotDir.
// Paths given to fn are workspace-relative (not relative to p). fn may
// return fs.SkipDir (on a directory: skip it; on a file: skip the rest of
// its directory) or fs.SkipAll (stop, Walk returns nil). fn runs without
// driver locks held, so it may read and write the workspace; entries
// written during a walk may or may not be visited.
func (w *Workspace) Walk(ctx context.Context, p string, fn WalkFunc) error {
	name, err := w.resolve(ctx, "walk", p)
	if err != nil {
		return err
	}
	if err := w.need("walk", name, w.caps.Read, "read"); err != nil {
		return err
	}
	// Pace every entry, whichever driver walks: a walk of a large tree
	// stays cancellable, and under js/wasm lets the host run its events.
	// (A Tick per entry reads the clock every 64 entries, which callbacks
	// doing real work per entry need; WalkRuns, for light ones, paces
	// more coarsely.)
	var pc Pacer
	user := fn
	fn = func(p string, e Entry) error {
		if err := pc.Tick(ctx); err != nil {
			return err
		}
		return user(p, e)
	}
	if wk, ok := w.d.(Walker); ok {
		err = wk.Walk(ctx, name, fn)
	} else {
		err = w.walkDir(ctx, name, fn)
	}
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return wrap("walk", name, err)
}

// WalkRunFunc is called by WalkRuns with a run of entries: consecutive
// entries of one directory listing, in walk order, where only the last may
// be a directory (its contents come in later runs). paths[i] is
// entries[i]'s workspace path. Both slices may be the driver's own: read
// them during the call, do not modify or keep them (the strings may be
// kept). Returning fs.SkipDir skips the directory that ends the run;
// fs.SkipAll stops the walk, and WalkRuns returns nil; any other error
// stops it and is returned.
type WalkRunFunc func(paths []string, entries []Entry) error

// RunWalker is implemented by drivers that can walk in runs
// (Workspace.WalkRuns) from listings they hold, so a walk costs a call per
// run rather than per entry.
type RunWalker interface {
	WalkRuns(ctx context.Context, root string, fn WalkRunFunc) error
}

// WalkRuns is Walk for callers that look at many entries and do little
// with each (glob): the same entries in the same order, handed over in
// runs (WalkRunFunc) instead of one call per entry, which under js/wasm,
// where a call costs several times what it does natively, was most of a
// walk. A run may be as short as one entry (drivers without RunWalker).
// The walk checks the context every 64 entries and, under js/wasm, the
// clock every 512 (to let other goroutines and the host's events in): a
// callback that does much work per entry (more than a few microseconds)
// should tick a Pacer itself, or use Walk. A driver's scan limit
// (ScanLimiter) ends the walk with a *ScanLimitError after that many files.
func (w *Workspace) WalkRuns(ctx context.Context, p string, fn WalkRunFunc) error {
	name, err := w.resolve(ctx, "walk", p)
	if err != nil {
		return err
	}
	if err := w.need("walk", name, w.caps.Read, "read"); err != nil {
		return err
	}
	pc := walkPacer{ctx: ctx}
	user := fn
	fn = func(ps []string, es []Entry) error {
		if err := pc.add(len(es)); err != nil {
			return err
		}
		return user(ps, es)
	}
	if sl, ok := w.d.(ScanLimiter); ok && sl.ScanLimit() > 0 {
		fn = limitRuns(sl.ScanLimit(), fn)
	}
	if rw, ok := w.d.(RunWalker); ok {
		err = rw.WalkRuns(ctx, name, fn)
	} else {
		// One entry per run, through the driver's Walker or the fallback.
		var ps [1]string
		var es [1]Entry
		one := func(p string, e Entry) error {
			ps[0], es[0] = p, e
			err := fn(ps[:], es[:])
			if err != nil && e.Kind != KindDir && errors.Is(err, fs.SkipDir) {
				return nil // a run ending at a file: nothing to skip
			}
			return err
		}
		if wk, ok := w.d.(Walker); ok {
			err = wk.Walk(ctx, name, one)
		} else {
			err = w.walkDir(ctx, name, one)
		}
	}
	if errors.Is(err, fs.SkipAll) {
		return nil
	}
	return wrap("walk", name, err)
}

// limitRuns passes runs on to fn until limit files have gone by; at the
// first file past it, fn gets the run up to that file and the walk stops
// with a *ScanLimitError (a walk with no file past the limit is whole).
func limitRuns(limit int, fn WalkRunFunc) WalkRunFunc {
	seen := 0
	return func(ps []string, es []Entry) error {
		for i := range es {
			if es[i].Kind == KindDir {
				continue
			}
			if seen == limit {
				if i > 0 {
					if err := fn(ps[:i], es[:i]); err != nil && !errors.Is(err, fs.SkipDir) {
						return err
					}
				}
				return &ScanLimitError{Limit: limit}
			}
			seen++
		}
		return fn(ps, es)
	}
}

// walkPacer paces WalkRuns by entries: every walkPaceEvery entries it
// asks a Pacer for a Check (the context on each, the js/wasm clock on
// every eighth, so every 512 entries). Ticking a Pacer per entry reads the
// clock every 64 entries, which under js/wasm (a call out to JS) was 14%
// of a no-op walk over GOROOT/src (RATIONALE.md).
type walkPacer struct {
	ctx  context.Context
	pc   Pacer
	n    int
	next int
}

const walkPaceEvery = 64

func (w *walkPacer) add(n int) error {
	w.n += n
	if w.n < w.next {
		return nil
	}
	w.next = w.n + walkPaceEvery
	return w.pc.Check(w.ctx)
}

// walkDir is the walk for drivers without a Walker, over ReadDir. A
// directory below dir that is gone, or is a file, by the time the walk
// lists it (the callback, or another writer, moved it) lists as empty,
// as it does in the drivers' own walks.
func (w *Workspace) walkDir(ctx context.Context, dir string, fn WalkFunc) error {
	return WalkTree(ctx, dir, func(d string) ([]Entry, []string, error) {
		es, err := w.d.ReadDir(ctx, d)
		if d != dir && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrNotDir)) {
			return nil, nil, nil
		}
		return es, nil, err
	}, fn)
}

// WalkTree is the one walk algorithm behind Workspace.Walk and the
// built-in drivers' Walkers: it visits the subtree under dir in lexical
// order, directories before their contents, listing each directory with
// list (which may take and drop the driver's lock). list returns the
// directory's entries sorted by name and, optionally, their workspace
// paths (paths[i] is entries[i]'s; nil: WalkTree joins dir and the name,
// one allocation per entry, which a driver that caches listings avoids by
// caching the paths too: see WalkTreeOf). Both slices are only read.
// fs.SkipDir, wrapped or not, from a directory skips it and from a file
// skips the rest of its directory; any other error stops the walk. ctx is
// checked before each listing.
func WalkTree(ctx context.Context, dir string, list func(dir string) (entries []Entry, paths []string, err error), fn WalkFunc) error {
	return WalkTreeOf(ctx, dir, struct{}{}, func(d string, _ struct{}) (*Listing[struct{}], error) {
		es, ps, err := list(d)
		return &Listing[struct{}]{Entries: es, Paths: ps}, err
	}, fn)
}

// Listing is one directory's listing for WalkTreeOf and WalkRunsOf, from a
// driver that keeps more than the entries. Only Entries is required; the
// walk computes what is nil, so a driver that caches listings caches the
// rest too and a walk then allocates nothing and looks nothing up.
type Listing[H any] struct {
	Entries []Entry  // sorted by name
	Paths   []string // Paths[i] is Entries[i]'s workspace path
	// Handles[i] is what the driver wants back when the walk lists
	// Entries[i] (memfs: its node), so it need not look the path up
	// again; under js/wasm hashing and comparing path keys without
	// hardware help was a quarter of a walk. The driver must check that a
	// handle is still good: the tree may have changed since.
	Handles []H
	Dirs    []int // the indices of the directories in Entries, ascending (non-nil when there are none)
}

// WalkTreeOf is WalkTree over a driver's Listings: root is dir's handle,
// and list is given back the handle of each directory it lists (the zero
// H when the listing had no Handles). A nil *Listing is an empty
// directory; the walk only reads a Listing, so a driver may return the
// one it caches.
func WalkTreeOf[H any](ctx context.Context, dir string, root H, list func(dir string, h H) (*Listing[H], error), fn WalkFunc) error {
	return walkRuns(ctx, dir, root, list, func(ps []string, es []Entry) error {
		for i := range es {
			if err := fn(ps[i], es[i]); err != nil {
				if !errors.Is(err, fs.SkipDir) {
					return err
				}
				if es[i].Kind == KindDir {
					return fs.SkipDir // the last of the run: skip its contents
				}
				return errSkipRest
			}
		}
		return nil
	})
}

// WalkRunsOf is WalkTreeOf for a RunWalker: the same walk, in runs
// (WalkRunFunc). fn's fs.SkipDir skips the directory ending the run.
func WalkRunsOf[H any](ctx context.Context, dir string, root H, list func(dir string, h H) (*Listing[H], error), fn WalkRunFunc) error {
	return walkRuns(ctx, dir, root, list, fn)
}

// errSkipRest, from a run callback, skips the rest of the directory.
var errSkipRest = errors.New("skip the rest of the directory")

// walkRuns is the walk itself: each listing is cut into runs ending at
// each directory, which is descended into after its run unless the run's
// callback returned fs.SkipDir, wrapped or not (from a run ending at a
// file, that skips nothing); errSkipRest ends the directory; any other
// error stops the walk.
func walkRuns[H any](ctx context.Context, dir string, root H, list func(dir string, h H) (*Listing[H], error), run WalkRunFunc) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l, err := list(dir, root)
	if err != nil || l == nil {
		return err
	}
	es, ps, hs, dirs := l.Entries, l.Paths, l.Handles, l.Dirs
	if ps != nil && len(ps) != len(es) || hs != nil && len(hs) != len(es) {
		return fmt.Errorf("walk %s: the listing has %d entries, %d paths and %d handles", Display(dir), len(es), len(ps), len(hs))
	}
	if len(es) == 0 {
		return nil
	}
	if ps == nil {
		ps = make([]string, len(es))
		for i := range es {
			if dir == "." {
				ps[i] = es[i].Name
			} else {
				ps[i] = dir + "/" + es[i].Name // dir and name are clean: no path.Join
			}
		}
	}
	if dirs == nil {
		dirs = []int{}
		for i := range es {
			if es[i].Kind == KindDir {
				dirs = append(dirs, i)
			}
		}
	}
	start := 0
	for _, d := range dirs {
		if d < start || d >= len(es) || es[d].Kind != KindDir {
			return fmt.Errorf("walk %s: the listing's directory index %d is not a directory in order", Display(dir), d)
		}
		err := run(ps[start:d+1], es[start:d+1])
		start = d + 1
		if err != nil {
			switch {
			case err == errSkipRest:
				return nil
			case errors.Is(err, fs.SkipDir):
				continue
			}
			return err
		}
		var h H
		if hs != nil {
			h = hs[d]
		}
		if err := walkRuns(ctx, ps[d], h, list, run); err != nil {
			return err
		}
	}
	if start < len(es) {
		if err := run(ps[start:], es[start:]); err != nil && err != errSkipRest && !errors.Is(err, fs.SkipDir) {
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
