package opfs

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/internal/tree"
)

// Options tune a driver. The zero value is ready to use.
type Options struct {
	// CacheBytes bounds the in-memory content cache (default 64 MiB).
	// Contents past it are read back from the log on demand.
	CacheBytes int64
	// CompactBytes is the log size below which the driver never compacts
	// (default 4 MiB). Above it, the log is rewritten once dead records
	// make up more than two thirds of it.
	CompactBytes int64
	// OnClose runs once, after Close has closed the log (the js binding
	// releases its Web Lock there).
	OnClose func()
}

// FS is the driver. It is safe for concurrent use; every change is one
// flushed log record, applied to the in-memory tree only once it is
// durable.
type FS struct {
	mu     sync.Mutex
	dir    Dir
	f      File
	gen    int
	end    int64 // where the next record goes
	live   int64 // bytes of the records live files came from
	tree   *tree.Tree[*file]
	cached int64
	opts   Options
	closed bool
	buf    []byte
	now    func() time.Time
	// pend holds PutFile records not yet written: bulk loads (a session's
	// initial files) go out in large writes under one flush. Records are
	// applied to the tree at once, at their future offsets (end+len(pend)).
	pend  []byte
	timer *time.Timer // flushes pend shortly after the last PutFile
	// broken is set when pending records could not be written: the tree
	// then holds entries the log lacks, so every later call fails with it
	// (reopening the root recovers the log's consistent state).
	broken error
}

// node is a file or directory in the tree; a file's content is a file.
type node = tree.Node[*file]

// file is where a file's content lies in the log, and its cached copy.
type file struct {
	off     int64 // content offset in the current log
	recSize int64
	ver     workspace.Version // rendered once, at apply
	data    []byte            // cached content, valid when isCache
	isCache bool
}

const logPrefix, logSuffix = "log-", ".a3s"

func logName(gen int) string { return logPrefix + strconv.Itoa(gen) + logSuffix }

func parseLogName(n string) (int, bool) {
	if !strings.HasPrefix(n, logPrefix) || !strings.HasSuffix(n, logSuffix) {
		return 0, false
	}
	g, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(n, logPrefix), logSuffix))
	return g, err == nil && g > 0
}

// OpenDir opens (or creates) the workspace stored in dir: it replays the
// newest complete log generation, drops a torn tail left by a crash, and
// deletes generations a crash left behind. Entries that are not log files
// are left alone, but a directory named like one is a *BlockedError.
func OpenDir(ctx context.Context, dir Dir, opts Options) (*FS, error) {
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = 64 << 20
	}
	if opts.CompactBytes <= 0 {
		opts.CompactBytes = 4 << 20
	}
	entries, err := dir.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("opfs: list root: %w", err)
	}
	var gens []int
	for _, e := range entries {
		if g, ok := parseLogName(e.Name); ok {
			if !e.File {
				// Not the driver's: refuse, before changing anything.
				return nil, &BlockedError{Entry: e.Name}
			}
			gens = append(gens, g)
		}
	}
	slices.Sort(gens)
	slices.Reverse(gens)
	f := &FS{dir: dir, opts: opts, now: time.Now}
	for i, g := range gens {
		ok, err := f.load(ctx, g)
		if err != nil {
			return nil, err
		}
		if ok {
			for _, old := range gens[i+1:] {
				if err := dir.Remove(ctx, logName(old)); err != nil {
					return nil, fmt.Errorf("opfs: remove stale %s: %w", logName(old), err)
				}
			}
			return f, nil
		}
		// An incomplete compaction: the older generation is still whole.
		if err := dir.Remove(ctx, logName(g)); err != nil {
			return nil, fmt.Errorf("opfs: remove incomplete %s: %w", logName(g), err)
		}
	}
	next := 1
	if len(gens) > 0 {
		next = gens[0] + 1
	}
	if err := f.rewrite(ctx, next); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *FS) reset() {
	f.tree = tree.New(time.Unix(0, f.now().UnixNano()), f.forget) // as a replayed mtime reads
	f.live, f.cached = 0, 0
}

// load replays generation g. It reports false, with the file closed, if
// the generation never reached its checkpoint.
func (f *FS) load(ctx context.Context, g int) (bool, error) {
	file, err := f.dir.Open(ctx, logName(g), false)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("opfs: open %s: %w", logName(g), err)
	}
	size, err := file.Size()
	if err != nil {
		file.Close()
		return false, fmt.Errorf("opfs: size of %s: %w", logName(g), err)
	}
	f.reset()
	br := bufio.NewReaderSize(io.NewSectionReader(file, 0, size), 1<<20)
	var pos int64
	checkpoint := false
	for {
		r, err := readRecord(br)
		if err == io.EOF || err == errTorn {
			break
		}
		if r.op == opCheckpoint {
			checkpoint = true
		} else {
			f.apply(r, pos)
		}
		pos += r.size()
	}
	if !checkpoint {
		file.Close()
		return false, nil
	}
	if pos < size { // a torn tail: no call that wrote it ever returned
		if err := file.Truncate(pos); err != nil {
			file.Close()
			return false, fmt.Errorf("opfs: truncate torn tail of %s: %w", logName(g), err)
		}
		if err := file.Flush(); err != nil {
			file.Close()
			return false, err
		}
	}
	f.f, f.gen, f.end = file, g, pos
	return true, nil
}

// apply changes the tree for a record that is at pos in the log. Records
// were checked (CheckPut, CheckRemove, CheckRename) before they were
// written, so apply does not check them again; a record that does not
// apply, which a log this driver wrote never holds, changes nothing.
func (f *FS) apply(r record, pos int64) {
	mod := time.Unix(0, r.mtime)
	switch r.op {
	case opPut:
		fl := &file{off: pos + headerLen + int64(len(r.a)), recSize: r.size(), ver: versionString(r.ver)}
		if f.tree.Put(r.a, fl, int64(len(r.b)), mod) == nil {
			f.live += fl.recSize
			f.cache(fl, r.b)
		}
	case opMkdir:
		f.tree.MkdirAll(r.a, mod)
	case opRemove:
		f.tree.Remove(r.a, mod)
	case opRename:
		f.tree.Rename(r.a, string(r.b), mod)
	}
}

func (f *FS) cache(fl *file, b []byte) {
	if int64(len(b)) > f.opts.CacheBytes/4 {
		return
	}
	fl.data, fl.isCache = b, true
	f.cached += int64(len(b))
	if f.cached > f.opts.CacheBytes {
		for _, n := range f.tree.All() { // any victim will do: evict until 3/4 full
			if o := n.File(); o != nil && o != fl && o.isCache {
				f.uncache(o)
			}
			if f.cached <= f.opts.CacheBytes*3/4 {
				break
			}
		}
	}
}

func (f *FS) uncache(fl *file) {
	if fl.isCache {
		f.cached -= int64(len(fl.data))
		fl.data, fl.isCache = nil, false
	}
}

// forget drops a file that is replaced or removed (the tree calls it):
// its cached content and its share of the live bytes.
func (f *FS) forget(fl *file) {
	f.uncache(fl)
	f.live -= fl.recSize
}

// commit writes r to the log, then applies it to the tree.
func (f *FS) commit(r record) error {
	at, err := f.write(r)
	if err != nil {
		return err
	}
	f.apply(r, at)
	return nil
}

// write appends records as one write and one flush. On failure the log is
// cut back, so the tree (unchanged) and the log agree.
func (f *FS) write(recs ...record) (int64, error) {
	if err := f.drain(); err != nil {
		return 0, err
	}
	f.buf = f.buf[:0]
	for i := range recs {
		f.buf = recs[i].appendTo(f.buf)
	}
	at := f.end
	if _, err := f.f.WriteAt(f.buf, at); err != nil {
		f.f.Truncate(at)
		return 0, fmt.Errorf("opfs: write log: %w", err)
	}
	if err := f.f.Flush(); err != nil {
		f.f.Truncate(at)
		return 0, fmt.Errorf("opfs: flush log: %w", err)
	}
	f.end += int64(len(f.buf))
	if cap(f.buf) > 1<<20 {
		f.buf = nil // do not pin a large write's buffer
	}
	return at, nil
}

// drain writes the pending PutFile records (without a flush: the caller's
// flush, or the timer's, covers them).
func (f *FS) drain() error {
	if len(f.pend) == 0 {
		return nil
	}
	if _, err := f.f.WriteAt(f.pend, f.end); err != nil {
		f.f.Truncate(f.end)
		f.broken = fmt.Errorf("opfs: writing %d bytes of loaded files failed (reopen the workspace): %w", len(f.pend), err)
		return f.broken
	}
	f.end += int64(len(f.pend))
	f.pend = f.pend[:0]
	if cap(f.pend) > 4<<20 {
		f.pend = nil
	}
	return nil
}

// sync drains and flushes: pending records become durable.
func (f *FS) sync() error {
	if err := f.drain(); err != nil {
		return err
	}
	return f.f.Flush()
}

// PutFile implements workspace.Putter for bulk loads: the record is
// buffered with others and written in large writes; it becomes durable
// with the next flushed change, at Close, or 50 ms after the last PutFile,
// whichever comes first. A crash before that loses whole files, never
// part of one (the log's records are all-or-nothing).
func (f *FS) PutFile(ctx context.Context, name string, data []byte) error {
	if err := f.lock(ctx); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if _, err := f.tree.CheckPut(name); err != nil {
		return err
	}
	r := record{op: opPut, a: name, b: data, mtime: f.now().UnixNano(), ver: versionBytes(workspace.VersionOf(data))}
	at := f.end + int64(len(f.pend))
	f.pend = r.appendTo(f.pend)
	f.apply(r, at)
	if len(f.pend) >= 1<<20 {
		if err := f.drain(); err != nil {
			return err
		}
	}
	if f.timer == nil {
		f.timer = time.AfterFunc(50*time.Millisecond, f.flushLater)
	} else {
		f.timer.Reset(50 * time.Millisecond)
	}
	return nil
}

func (f *FS) flushLater() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed && f.broken == nil {
		f.sync()
	}
}

// rewrite writes every live entry into generation g, ends it with a
// checkpoint, and switches to it: compaction, and the start of a new root.
func (f *FS) rewrite(ctx context.Context, g int) error {
	if f.f != nil {
		if err := f.drain(); err != nil {
			return err
		}
	}
	name := logName(g)
	if err := f.dir.Remove(ctx, name); err != nil {
		return err
	}
	nf, err := f.dir.Open(ctx, name, true)
	if err != nil {
		return fmt.Errorf("opfs: create %s: %w", name, err)
	}
	fail := func(err error) error {
		nf.Close()
		f.dir.Remove(ctx, name)
		return err
	}
	if err := nf.Truncate(0); err != nil {
		return fail(err)
	}
	if f.tree == nil {
		f.reset()
	}
	paths := make([]string, 0, f.tree.Len())
	for p := range f.tree.All() {
		if p != "." {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	type moved struct {
		fl           *file
		off, recSize int64
	}
	var offs []moved
	var buf []byte
	var pos, flushed int64
	for _, p := range paths {
		n, _ := f.tree.Lookup(p)
		r := record{op: opMkdir, a: p, mtime: n.ModTime().UnixNano()}
		if !n.IsDir() {
			data, err := f.content(n)
			if err != nil {
				return fail(err)
			}
			r = record{op: opPut, a: p, b: data, mtime: r.mtime, ver: versionBytes(n.File().ver)}
			offs = append(offs, moved{n.File(), pos + headerLen + int64(len(p)), r.size()})
		}
		buf = r.appendTo(buf)
		pos += r.size()
		if len(buf) >= 1<<20 {
			if _, err := nf.WriteAt(buf, flushed); err != nil {
				return fail(err)
			}
			flushed += int64(len(buf))
			buf = buf[:0]
		}
	}
	cp := record{op: opCheckpoint, mtime: f.now().UnixNano()}
	buf = cp.appendTo(buf)
	pos += cp.size()
	if _, err := nf.WriteAt(buf, flushed); err != nil {
		return fail(err)
	}
	if err := nf.Flush(); err != nil {
		return fail(err)
	}
	old, oldGen := f.f, f.gen
	f.f, f.gen, f.end = nf, g, pos
	f.live = 0
	for _, m := range offs {
		m.fl.off, m.fl.recSize = m.off, m.recSize
		f.live += m.recSize
	}
	if old != nil {
		old.Close()
		f.dir.Remove(ctx, logName(oldGen))
	}
	return nil
}

func (f *FS) maybeCompact(ctx context.Context) {
	if end := f.end + int64(len(f.pend)); end > f.opts.CompactBytes && end > 3*f.live {
		// A failed compaction leaves the current log in use; the next
		// write tries again.
		_ = f.rewrite(ctx, f.gen+1)
	}
}

// content returns a file's bytes from the cache or the log.
func (f *FS) content(n *node) ([]byte, error) {
	fl := n.File()
	if fl.isCache {
		return fl.data, nil
	}
	if fl.off >= f.end { // still in pend
		if err := f.drain(); err != nil {
			return nil, err
		}
	}
	b := make([]byte, n.Size())
	if len(b) > 0 {
		if _, err := f.f.ReadAt(b, fl.off); err != nil && !(err == io.EOF) {
			return nil, fmt.Errorf("opfs: read log: %w", err)
		}
	}
	f.cache(fl, b)
	return b, nil
}

func (f *FS) lock(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return fs.ErrClosed
	}
	if f.broken != nil {
		err := f.broken
		f.mu.Unlock()
		return err
	}
	return nil
}

// Capabilities: read, write and search; no exec, no git.
func (f *FS) Capabilities() workspace.Capabilities {
	return workspace.Capabilities{Read: true, Write: true, Search: true}
}

// Stat implements workspace.Driver.
func (f *FS) Stat(ctx context.Context, name string) (workspace.Entry, error) {
	if err := f.lock(ctx); err != nil {
		return workspace.Entry{}, err
	}
	defer f.mu.Unlock()
	return f.tree.Stat(name)
}

// ReadFile implements workspace.Driver. The slice is shared and never
// modified by the driver.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, workspace.Version, error) {
	if err := f.lock(ctx); err != nil {
		return nil, "", err
	}
	defer f.mu.Unlock()
	n, err := f.tree.Lookup(name)
	if err != nil {
		return nil, "", err
	}
	if n.IsDir() {
		return nil, "", workspace.ErrIsDir
	}
	b, err := f.content(n)
	if err != nil {
		return nil, "", err
	}
	return b, n.File().ver, nil
}

// ReadData implements workspace.DataReader: versions are rendered at
// apply, so this is ReadFile without its version.
func (f *FS) ReadData(ctx context.Context, name string) ([]byte, error) {
	b, _, err := f.ReadFile(ctx, name)
	return b, err
}

// ReadLines implements workspace.LineReader.
func (f *FS) ReadLines(ctx context.Context, name string, offset, limit int) (workspace.LineRange, error) {
	b, _, err := f.ReadFile(ctx, name)
	if err != nil {
		return workspace.LineRange{}, err
	}
	return workspace.SliceLines(b, offset, limit), nil
}

// WriteFile implements workspace.Driver: one record, flushed before it
// returns.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	if err := f.lock(ctx); err != nil {
		return "", err
	}
	defer f.mu.Unlock()
	return f.put(ctx, name, data, ifVersion)
}

func (f *FS) put(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	old, err := f.tree.CheckPut(name)
	if err != nil {
		return "", err
	}
	if ifVersion != "" {
		if old == nil {
			return "", &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: "(missing)"}
		}
		if cur := old.File().ver; cur != ifVersion {
			return "", &workspace.ConflictError{Path: name, Expected: ifVersion, Actual: cur}
		}
	}
	v := workspace.VersionOf(data)
	r := record{op: opPut, a: name, b: data, mtime: f.now().UnixNano(), ver: versionBytes(v)}
	if err := f.commit(r); err != nil {
		return "", err
	}
	f.maybeCompact(ctx)
	return v, nil
}

// AppendFile implements workspace.Appender.
func (f *FS) AppendFile(ctx context.Context, name string, data []byte, ifVersion workspace.Version) (workspace.Version, error) {
	if err := f.lock(ctx); err != nil {
		return "", err
	}
	defer f.mu.Unlock()
	var old []byte
	n, err := f.tree.CheckPut(name)
	if err != nil {
		return "", err
	}
	if n != nil {
		if old, err = f.content(n); err != nil {
			return "", err
		}
	}
	buf := make([]byte, 0, len(old)+len(data))
	buf = append(append(buf, old...), data...)
	return f.put(ctx, name, buf, ifVersion)
}

// MkdirAll implements workspace.Driver.
func (f *FS) MkdirAll(ctx context.Context, name string) error {
	if err := f.lock(ctx); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if n, err := f.tree.Lookup(name); err == nil {
		if !n.IsDir() {
			return workspace.ErrNotDir
		}
		return nil
	} else if err != fs.ErrNotExist {
		return err
	}
	r := record{op: opMkdir, a: name, mtime: f.now().UnixNano()}
	if err := f.commit(r); err != nil {
		return err
	}
	return nil
}

// ReadDir implements workspace.Driver.
func (f *FS) ReadDir(ctx context.Context, name string) ([]workspace.Entry, error) {
	if err := f.lock(ctx); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	return f.tree.ReadDir(name)
}

// Remove implements workspace.Driver.
func (f *FS) Remove(ctx context.Context, name string) error {
	if err := f.lock(ctx); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if err := f.tree.CheckRemove(name); err != nil {
		return err
	}
	r := record{op: opRemove, a: name, mtime: f.now().UnixNano()}
	if err := f.commit(r); err != nil {
		return err
	}
	f.maybeCompact(ctx)
	return nil
}

// Rename implements workspace.Driver.
func (f *FS) Rename(ctx context.Context, from, to string) error {
	if err := f.lock(ctx); err != nil {
		return err
	}
	defer f.mu.Unlock()
	if err := f.tree.CheckRename(from, to); err != nil {
		return err
	}
	r := record{op: opRename, a: from, b: []byte(to), mtime: f.now().UnixNano()}
	if err := f.commit(r); err != nil {
		return err
	}
	f.maybeCompact(ctx)
	return nil
}

// Walk implements workspace.Walker: lexical order, directories before
// their contents, from the tree's cached listings, each taken under one
// hold of the lock.
func (f *FS) Walk(ctx context.Context, root string, fn workspace.WalkFunc) error {
	return f.tree.Walk(ctx, root, walkLock{f, ctx}, fn)
}

// WalkRuns implements workspace.RunWalker: Walk's entries in runs cut from
// the cached listings, which fn gets as they are (it must not modify
// them).
func (f *FS) WalkRuns(ctx context.Context, root string, fn workspace.WalkRunFunc) error {
	return f.tree.WalkRuns(ctx, root, walkLock{f, ctx}, fn)
}

// walkLock is the tree's Locker for walks: the driver's one lock, refused
// once the driver is closed or broken.
type walkLock struct {
	f   *FS
	ctx context.Context
}

func (l walkLock) RLock() error { return l.f.lock(l.ctx) }
func (l walkLock) RUnlock()     { l.f.mu.Unlock() }

// Files implements workspace.FileLister: the paths of every file under
// dir, in Walk's order, from the tree's list (rebuilt only after a file or
// directory is created, removed or moved). The slice is shared: callers
// must not modify it.
func (f *FS) Files(ctx context.Context, dir string) ([]string, error) {
	if err := f.lock(ctx); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	return f.tree.Files(dir)
}

// Stats describes the log, for tests and benchmarks.
type Stats struct {
	Generation  int   `json:"generation"`
	LogBytes    int64 `json:"logBytes"`
	LiveBytes   int64 `json:"liveBytes"`
	CachedBytes int64 `json:"cachedBytes"`
	Entries     int   `json:"entries"`
}

// Stats reports the log's size and the cache's.
func (f *FS) Stats() Stats {
	f.mu.Lock()
	defer f.mu.Unlock()
	return Stats{Generation: f.gen, LogBytes: f.end + int64(len(f.pend)), LiveBytes: f.live, CachedBytes: f.cached, Entries: f.tree.Len()}
}

// Close flushes and closes the log and runs Options.OnClose. Later calls
// fail with fs.ErrClosed. Close is idempotent.
func (f *FS) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	if f.timer != nil {
		f.timer.Stop()
	}
	var err error
	if f.f != nil {
		if f.broken == nil {
			err = f.sync()
		}
		err = errors.Join(err, f.f.Close())
	}
	f.mu.Unlock()
	if f.opts.OnClose != nil {
		f.opts.OnClose()
	}
	return err
}

var (
	_ tree.Driver = (*FS)(nil)
	_ io.Closer   = (*FS)(nil)
)
