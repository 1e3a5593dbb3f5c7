package workspacetest

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

// item is what the suite compares of one path across a reopen.
type item struct {
	kind workspace.Kind
	size int64
	mod  time.Time // files only: a directory's may be rebuilt from its entries'
	ver  workspace.Version
	data string
}

func (it item) String() string {
	if it.kind == workspace.KindDir {
		return "dir"
	}
	return fmt.Sprintf("file of %d bytes %.40q, %s, modified %s", it.size, it.data, it.ver, it.mod.Format(time.RFC3339Nano))
}

// state is every path under the root with what reopening must keep.
func (e *env) state() map[string]item {
	e.t.Helper()
	m := map[string]item{}
	err := e.ws.Walk(e.ctx, ".", func(p string, en workspace.Entry) error {
		if en.Kind == workspace.KindDir {
			m[p] = item{kind: en.Kind}
			return nil
		}
		b, v, err := e.ws.ReadFile(e.ctx, p)
		m[p] = item{kind: en.Kind, size: en.Size, mod: en.ModTime, ver: v, data: string(b)}
		return err
	})
	if err != nil {
		e.t.Fatalf("state walk: %v", err)
	}
	return m
}

// reopen closes the driver, opens its storage again through the harness
// and checks the new driver holds what the old one did: every path, kind,
// size, content, version and file modification time.
func (e *env) reopen(when string) {
	e.t.Helper()
	before := e.state()
	ws, err := workspace.New(e.h.Reopen(e.t, e.ws.Driver()))
	if err != nil {
		e.t.Fatalf("workspace.New after reopening: %v", err)
	}
	e.ws = ws
	after := e.state()
	for p, b := range before {
		a, ok := after[p]
		switch {
		case !ok:
			e.t.Errorf("reopened %s: %s is gone (was %v)", when, p, b)
		case a.kind != b.kind || a.size != b.size || a.ver != b.ver || a.data != b.data || !a.mod.Equal(b.mod):
			e.t.Errorf("reopened %s: %s is %v, was %v", when, p, a, b)
		}
	}
	for p, a := range after {
		if _, ok := before[p]; !ok {
			e.t.Errorf("reopened %s: %s appeared (%v)", when, p, a)
		}
	}
}

// testReopen: every kind of change survives closing the driver and
// opening its storage again, and versions read before stay good after.
func testReopen(t *testing.T, e *env) {
	if e.h.Reopen == nil {
		t.Skip("the harness has no Reopen: nothing outlives this driver")
	}
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"write nested", func() error { _, err := e.ws.WriteFile(e.ctx, "a/b/c.txt", []byte("one")); return err }},
		{"overwrite", func() error { _, err := e.ws.WriteFile(e.ctx, "a/b/c.txt", []byte("two")); return err }},
		{"append", func() error { _, err := e.ws.AppendFile(e.ctx, "a/b/c.txt", []byte("+3"), ""); return err }},
		{"put", func() error { return e.ws.PutFile(e.ctx, "p/q.txt", []byte("put")) }},
		{"empty file", func() error { _, err := e.ws.WriteFile(e.ctx, "empty", nil); return err }},
		{"every byte value", func() error { _, err := e.ws.WriteFile(e.ctx, "bin", all); return err }},
		{"empty directories", func() error { return e.ws.MkdirAll(e.ctx, "d/e") }},
		{"rename a directory", func() error { return e.ws.Rename(e.ctx, "a", "z/a") }},
		{"remove a directory", func() error {
			if _, err := e.ws.WriteFile(e.ctx, "gone/x", []byte("x")); err != nil {
				return err
			}
			return e.ws.Remove(e.ctx, "gone")
		}},
		{"rename a file over a file", func() error {
			if _, err := e.ws.WriteFile(e.ctx, "r1", []byte("r1")); err != nil {
				return err
			}
			if _, err := e.ws.WriteFile(e.ctx, "r2", []byte("r2")); err != nil {
				return err
			}
			return e.ws.Rename(e.ctx, "r1", "r2")
		}},
		{"remove a file", func() error { return e.ws.Remove(e.ctx, "p/q.txt") }},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		e.reopen("after " + s.name)
	}
	equal(t, "the tree after reopening", e.walk("."), []string{"bin", "d/", "d/e/", "empty", "p/", "r2", "z/", "z/a/", "z/a/b/", "z/a/b/c.txt"})
	if got := e.read("z/a/b/c.txt"); got != "two+3" {
		t.Errorf("z/a/b/c.txt = %q after reopening; want %q", got, "two+3")
	}
	if b, _, _ := e.ws.ReadFile(e.ctx, "bin"); !bytes.Equal(b, all) {
		t.Errorf("bin = %q after reopening", b)
	}
	if files, err := e.ws.Files(e.ctx, "."); err != nil || !slices.Equal(files, []string{"bin", "empty", "r2", "z/a/b/c.txt"}) {
		t.Errorf("Files(.) after reopening = %q, %v", files, err)
	}

	// A version read before a reopen is still the file's version after it.
	v := e.write("cas.txt", "before")
	e.reopen("after a write")
	if _, err := e.ws.WriteFileIfVersion(e.ctx, "cas.txt", []byte("after"), v); err != nil {
		t.Errorf("compare-and-swap with the version from before reopening: %v", err)
	}
	e.reopen("after a compare-and-swap")
	_, err := e.ws.WriteFileIfVersion(e.ctx, "cas.txt", []byte("stale"), v)
	wantIs(t, "compare-and-swap with a stale version after reopening", err, workspace.ErrConflict)
	if got := e.read("cas.txt"); got != "after" {
		t.Errorf("cas.txt = %q", got)
	}

	// A large tree renamed as a whole, then reopened.
	for i := range 200 {
		if err := e.ws.PutFile(e.ctx, fmt.Sprintf("big/d%d/f%03d.txt", i%7, i), []byte(strings.Repeat("x", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.ws.Rename(e.ctx, "big", "moved/big"); err != nil {
		t.Fatal(err)
	}
	e.reopen("after renaming a directory of 200 files")
	if files, err := e.ws.Files(e.ctx, "moved/big"); err != nil || len(files) != 200 {
		t.Errorf("Files(moved/big) after reopening: %d files, %v", len(files), err)
	}
}
