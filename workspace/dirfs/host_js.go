//go:build js && wasm

package dirfs

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall/js"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// OpenHost returns a driver over the directory a host object serves: the
// object npm/src/dirhost.mjs's openDirHost returns in Node (methods stat,
// read, write, readdir, mkdirAll, removeAll, rename and the property
// root). The wasm never touches the disk itself: os.Root over Node's fs
// is open to a symbolic-link swap (Go documents it; research §3 measured
// 2,734 leaks in 20,000 reads), so the host opens every file and checks
// the descriptor it opened.
func OpenHost(h js.Value) (*FS, error) {
	if h.Type() != js.TypeObject || h.Get("root").Type() != js.TypeString {
		return nil, errors.New("dirfs: the host object has no root")
	}
	return newFS(&hostBackend{h: h, path: h.Get("root").String()}), nil
}

// Host is the host object the driver calls (under js/wasm).
func (f *FS) Host() js.Value { return f.b.(*hostBackend).h }

// hostBackend calls the host object synchronously: each method is a few
// node:fs calls, and a Promise per file would cost a goroutine switch
// and an event-loop turn for every file a search reads.
type hostBackend struct {
	h      js.Value
	path   string
	closed bool
}

func (b *hostBackend) root() string { return b.path }

func (b *hostBackend) close() error {
	b.closed = true
	return nil
}

var errClosed = errors.New("the directory workspace is closed")

// call invokes a method; a JS exception becomes the workspace error its
// code names.
func (b *hostBackend) call(m string, args ...any) (v js.Value, err error) {
	if b.closed {
		return js.Undefined(), errClosed
	}
	defer func() {
		if r := recover(); r != nil {
			je, ok := r.(js.Error)
			if !ok {
				panic(r)
			}
			err = hostErr(je.Value)
		}
	}()
	return b.h.Call(m, args...), nil
}

func hostErr(v js.Value) error {
	code := ""
	if c := v.Get("code"); c.Type() == js.TypeString {
		code = c.String()
	}
	switch code {
	case "ENOENT":
		return workspace.ErrNotExist
	case "ENOTDIR":
		return workspace.ErrNotDir
	case "EISDIR":
		return workspace.ErrIsDir
	case "EEXIST", "ENOTEMPTY":
		return workspace.ErrExist
	case "ESCAPE":
		return errEscape
	case "ENOTREG":
		return errNotRegular
	}
	msg := v.Get("message").String()
	// Node's messages repeat the path ("EACCES: permission denied, open
	// '/abs/x'"): keep the words before it, the workspace names the path.
	if i := strings.Index(msg, ", "); i > 0 && code != "" {
		msg = msg[:i]
	}
	return errors.New(msg)
}

// parseEntry reads "kind\0size\0mtimeMs" (dirhost.mjs packed).
func parseEntry(name, s string) (workspace.Entry, error) {
	f := strings.Split(s, "\x00")
	if len(f) != 3 {
		return workspace.Entry{}, fmt.Errorf("dirfs: malformed entry %q from the host", s)
	}
	size, err1 := strconv.ParseInt(f[1], 10, 64)
	ms, err2 := strconv.ParseFloat(f[2], 64)
	if err1 != nil || err2 != nil {
		return workspace.Entry{}, fmt.Errorf("dirfs: malformed entry %q from the host", s)
	}
	e := workspace.Entry{Name: name, Size: size, ModTime: time.UnixMicro(int64(ms * 1000))}
	switch f[0] {
	case "f":
		e.Kind = workspace.KindFile
	case "d":
		e.Kind = workspace.KindDir
	case "l":
		e.Kind = workspace.KindLink
	default:
		e.Kind = workspace.KindUnknown
	}
	return e, nil
}

func (b *hostBackend) stat(name string, follow bool) (workspace.Entry, error) {
	v, err := b.call("stat", name, follow)
	if err != nil {
		return workspace.Entry{}, err
	}
	return parseEntry(name, v.String())
}

func (b *hostBackend) readFile(name string) ([]byte, error) {
	v, err := b.call("read", name)
	if err != nil {
		return nil, err
	}
	out := make([]byte, v.Length())
	js.CopyBytesToGo(out, v)
	return out, nil
}

var uint8Array = js.Global().Get("Uint8Array")

func (b *hostBackend) writeFile(name string, data []byte, add bool) error {
	a := uint8Array.New(len(data))
	js.CopyBytesToJS(a, data)
	_, err := b.call("write", name, a, add)
	return err
}

func (b *hostBackend) readDir(name string) ([]workspace.Entry, error) {
	v, err := b.call("readdir", name)
	if err != nil {
		return nil, err
	}
	f := strings.Split(v.String(), "\x00")
	var es []workspace.Entry
	for i := 0; i+4 <= len(f); i += 4 {
		e, err := parseEntry(f[i], strings.Join(f[i+1:i+4], "\x00"))
		if err != nil {
			return nil, err
		}
		es = append(es, e)
	}
	return es, nil
}

func (b *hostBackend) mkdirAll(name string) error {
	_, err := b.call("mkdirAll", name)
	return err
}

func (b *hostBackend) removeAll(name string) error {
	_, err := b.call("removeAll", name)
	return err
}

func (b *hostBackend) rename(from, to string) error {
	_, err := b.call("rename", from, to)
	return err
}
