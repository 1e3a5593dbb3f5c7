//go:build js && wasm

package opfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"syscall/js"
	"time"

	"github.com/a3s-lab/code-wasm/internal/jsbridge"
)

// ErrBusy is returned by Open when another tab or worker holds the root.
var ErrBusy = errors.New("opfs: root is in use by another tab or worker")

// Open opens the workspace stored under root, a directory at the top of
// the origin's OPFS (created if missing); root must pass ValidateRoot,
// which keeps one root from ever lying inside another. It takes the Web
// Lock "a3s-code-wasm:opfs:<root>" for the driver's life, so two tabs can
// never write one root at once: the second Open fails with ErrBusy at once
// instead of waiting. Close releases the lock; so does closing the tab.
//
// Open needs a dedicated Worker (FileSystemSyncAccessHandle exists only
// there); the npm package's browser entry runs the wasm in one.
func Open(ctx context.Context, root string, opts Options) (*FS, error) {
	if err := ValidateRoot(root); err != nil {
		return nil, err
	}
	storage := js.Global().Get("navigator").Get("storage")
	if storage.IsUndefined() || storage.Get("getDirectory").Type() != js.TypeFunction {
		return nil, errors.New("opfs: this runtime has no Origin Private File System (navigator.storage.getDirectory)")
	}
	if fh := js.Global().Get("FileSystemFileHandle"); fh.IsUndefined() || fh.Get("prototype").Get("createSyncAccessHandle").Type() != js.TypeFunction {
		return nil, errors.New("opfs: createSyncAccessHandle is not available here: OPFS workspaces run in a dedicated Worker (the package's browser entry starts one)")
	}
	release, err := lockRoot(ctx, root)
	if err != nil {
		return nil, err
	}
	d, err := jsbridge.Await(ctx, storage.Call("getDirectory"))
	if err == nil {
		d, err = jsbridge.Await(ctx, d.Call("getDirectoryHandle", root, map[string]any{"create": true}))
	}
	if err != nil {
		release()
		return nil, fmt.Errorf("opfs: open root %q: %w", root, err)
	}
	prev := opts.OnClose
	opts.OnClose = func() {
		release()
		if prev != nil {
			prev()
		}
	}
	f, err := OpenDir(ctx, &jsDir{h: d}, opts)
	if err != nil {
		release()
		var be *BlockedError
		if errors.As(err, &be) {
			be.Root = root
		}
		return nil, err
	}
	return f, nil
}

// lockRoot holds an exclusive Web Lock on root until the returned release
// runs. Runtimes without navigator.locks get no cross-tab lock; the sync
// access handle, which is exclusive per file, still refuses a second
// writer.
func lockRoot(ctx context.Context, root string) (func(), error) {
	locks := js.Global().Get("navigator").Get("locks")
	if locks.IsUndefined() || locks.IsNull() {
		return func() {}, nil
	}
	got := make(chan bool, 1)
	var releaseLock js.Value
	var cb js.Func
	cb = js.FuncOf(func(this js.Value, args []js.Value) any {
		cb.Release()
		if len(args) == 0 || args[0].IsNull() {
			got <- false
			return nil
		}
		// The lock is held until this Promise settles.
		var exec js.Func
		exec = js.FuncOf(func(this js.Value, a []js.Value) any {
			releaseLock = a[0]
			exec.Release()
			return nil
		})
		p := js.Global().Get("Promise").New(exec)
		got <- true
		return p
	})
	held := locks.Call("request", "a3s-code-wasm:opfs:"+root, map[string]any{"mode": "exclusive", "ifAvailable": true}, cb)
	select {
	case ok := <-got:
		if !ok {
			return nil, fmt.Errorf("%w: %q (close the workspace's session in the other tab, or use another root)", ErrBusy, root)
		}
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	done := false
	return func() {
		if done {
			return
		}
		done = true
		releaseLock.Invoke()
		// request() settles once the lock is really free, so a session
		// reopened right after Close finds the root available.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		jsbridge.Await(ctx, held)
	}, nil
}

type jsDir struct{ h js.Value }

func (d *jsDir) List(ctx context.Context) ([]DirEntry, error) {
	it := d.h.Call("values")
	var out []DirEntry
	for {
		r, err := jsbridge.Await(ctx, it.Call("next"))
		if err != nil {
			return nil, err
		}
		if r.Get("done").Truthy() {
			return out, nil
		}
		h := r.Get("value")
		out = append(out, DirEntry{Name: h.Get("name").String(), File: h.Get("kind").String() == "file"})
	}
}

func (d *jsDir) Open(ctx context.Context, name string, create bool) (File, error) {
	fh, err := jsbridge.Await(ctx, d.h.Call("getFileHandle", name, map[string]any{"create": create}))
	if err != nil {
		if !create && strings.Contains(err.Error(), "could not be found") {
			return nil, fs.ErrNotExist
		}
		return nil, err
	}
	h, err := jsbridge.Await(ctx, fh.Call("createSyncAccessHandle"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w (is the root open in another tab?)", name, err)
	}
	return &jsFile{h: h}, nil
}

// Remove deletes name if it is there. Presence is checked by listing, not
// by matching the text of a NotFoundError (which crosses as a message).
func (d *jsDir) Remove(ctx context.Context, name string) error {
	entries, err := d.List(ctx)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(entries, func(e DirEntry) bool { return e.Name == name }) {
		return nil
	}
	_, err = jsbridge.Await(ctx, d.h.Call("removeEntry", name))
	return err
}

// jsFile is a FileSystemSyncAccessHandle: every method is synchronous, so
// calling it from a goroutine needs no event-loop turn.
type jsFile struct {
	h   js.Value
	buf js.Value // reused Uint8Array scratch
}

func (f *jsFile) scratch(n int) js.Value {
	if f.buf.IsUndefined() || f.buf.Get("byteLength").Int() < n {
		size := 64 << 10
		for size < n {
			size *= 2
		}
		f.buf = js.Global().Get("Uint8Array").New(size)
	}
	return f.buf.Call("subarray", 0, n)
}

func (f *jsFile) ReadAt(p []byte, off int64) (n int, err error) {
	defer recoverJS(&err)
	u := f.scratch(len(p))
	got := f.h.Call("read", u, map[string]any{"at": off}).Int()
	js.CopyBytesToGo(p[:got], u.Call("subarray", 0, got))
	if got < len(p) {
		return got, io.EOF
	}
	return got, nil
}

func (f *jsFile) WriteAt(p []byte, off int64) (n int, err error) {
	defer recoverJS(&err)
	u := f.scratch(len(p))
	js.CopyBytesToJS(u, p)
	n = f.h.Call("write", u, map[string]any{"at": off}).Int()
	if n != len(p) {
		return n, io.ErrShortWrite
	}
	if cap(p) > 8<<20 {
		f.buf = js.Undefined() // do not pin a huge scratch buffer
	}
	return n, nil
}

func (f *jsFile) Size() (n int64, err error) {
	defer recoverJS(&err)
	return int64(f.h.Call("getSize").Int()), nil
}

func (f *jsFile) Truncate(size int64) (err error) {
	defer recoverJS(&err)
	f.h.Call("truncate", size)
	return nil
}

func (f *jsFile) Flush() (err error) {
	defer recoverJS(&err)
	f.h.Call("flush")
	return nil
}

func (f *jsFile) Close() (err error) {
	defer recoverJS(&err)
	f.h.Call("close")
	return nil
}

// recoverJS turns a thrown JS exception (syscall/js panics with js.Error)
// into an error.
func recoverJS(err *error) {
	if r := recover(); r != nil {
		if je, ok := r.(js.Error); ok {
			*err = errors.New(jsbridge.JSErrorString(je.Value))
			return
		}
		panic(r)
	}
}
