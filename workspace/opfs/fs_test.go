package opfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/a3s-lab/code-wasm/workspace"
)

func open(t *testing.T, d *MemDir, o Options) *FS {
	t.Helper()
	f, err := OpenDir(context.Background(), d, o)
	if err != nil {
		t.Fatalf("OpenDir: %v", err)
	}
	return f
}

func read(t *testing.T, f *FS, name string) string {
	t.Helper()
	b, _, err := f.ReadFile(context.Background(), name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

// state renders every file as path=content, for comparing whole states.
func state(t *testing.T, f *FS) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := f.Walk(context.Background(), ".", func(p string, e workspace.Entry) error {
		if e.Kind == workspace.KindDir {
			out[p+"/"] = ""
			return nil
		}
		out[p] = read(t, f, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestCrashAtEveryByte cuts the log after every possible byte of a stream
// of overwrites, as a crash mid-write would, and reopens: each file must be
// whole-old or whole-new, and nothing acknowledged before the cut is lost.
func TestCrashAtEveryByte(t *testing.T) {
	ctx := context.Background()
	d := NewMemDir()
	f := open(t, d, Options{})
	name := logName(f.Stats().Generation)
	type point struct {
		size  int64
		state map[string]string
	}
	points := []point{{f.Stats().LogBytes, state(t, f)}}
	for i := range 12 {
		p := fmt.Sprintf("f%d.txt", i%3)
		body := bytes.Repeat([]byte{byte('a' + i)}, 50+i*7)
		if _, err := f.WriteFile(ctx, p, body, ""); err != nil {
			t.Fatal(err)
		}
		points = append(points, point{f.Stats().LogBytes, state(t, f)})
	}
	f.Close()
	full := d.Bytes(name)
	for cut := int64(0); cut <= int64(len(full)); cut++ {
		// The newest state whose records all fit before the cut.
		want := points[0].state
		for _, p := range points {
			if p.size <= cut {
				want = p.state
			}
		}
		cd := NewMemDir()
		cd.SetBytes(name, full[:cut])
		g, err := OpenDir(ctx, cd, Options{})
		if err != nil {
			t.Fatalf("cut %d: %v", cut, err)
		}
		if cut < points[0].size {
			want = map[string]string{} // the root's checkpoint itself was torn
		}
		if got := state(t, g); !mapsEqual(got, want) {
			t.Fatalf("cut at %d of %d:\n got %v\nwant %v", cut, len(full), got, want)
		}
		// The torn tail is gone: a new write lands after the valid records.
		if _, err := g.WriteFile(ctx, "after", []byte("ok"), ""); err != nil {
			t.Fatal(err)
		}
		g.Close()
		h := open(t, cd, Options{})
		if read(t, h, "after") != "ok" {
			t.Fatalf("cut %d: write after recovery lost", cut)
		}
		h.Close()
	}
}

func TestCompaction(t *testing.T) {
	ctx := context.Background()
	d := NewMemDir()
	f := open(t, d, Options{CompactBytes: 4 << 10, CacheBytes: 1 << 10})
	gen := f.Stats().Generation
	body := bytes.Repeat([]byte("x"), 300)
	for i := range 100 {
		if _, err := f.WriteFile(ctx, fmt.Sprintf("k%d", i%4), append(body, byte('0'+i%10)), ""); err != nil {
			t.Fatal(err)
		}
	}
	st := f.Stats()
	if st.Generation == gen {
		t.Fatalf("no compaction after 100 overwrites of 4 files: %+v", st)
	}
	if st.LogBytes > 3*st.LiveBytes+4<<10 {
		t.Fatalf("log not compacted: %+v", st)
	}
	want := state(t, f)
	f.Close()
	names, _ := d.List(ctx)
	if len(names) != 1 || names[0] != (DirEntry{logName(st.Generation), true}) {
		t.Fatalf("old generations left behind: %v", names)
	}
	g := open(t, d, Options{})
	if got := state(t, g); !mapsEqual(got, want) {
		t.Fatalf("after compaction and reopen:\n got %v\nwant %v", got, want)
	}
	g.Close()
}

func TestIncompleteCompactionIsDiscarded(t *testing.T) {
	ctx := context.Background()
	d := NewMemDir()
	f := open(t, d, Options{})
	f.WriteFile(ctx, "keep", []byte("old"), "")
	gen := f.Stats().Generation
	f.Close()
	// A next generation that never reached its checkpoint.
	r := record{op: opPut, a: "keep", b: []byte("partial"), ver: versionBytes(workspace.VersionOf([]byte("partial")))}
	d.SetBytes(logName(gen+1), r.appendTo(nil))
	g := open(t, d, Options{})
	if got := read(t, g, "keep"); got != "old" {
		t.Fatalf("keep = %q, want the complete generation's %q", got, "old")
	}
	g.Close()
	names, _ := d.List(ctx)
	if !slices.Equal(names, []DirEntry{{logName(gen), true}}) {
		t.Fatalf("files = %v, want only %s", names, logName(gen))
	}
}

func TestEvictedContentIsReadBack(t *testing.T) {
	ctx := context.Background()
	d := NewMemDir()
	f := open(t, d, Options{CacheBytes: 2 << 10})
	for i := range 50 {
		if _, err := f.WriteFile(ctx, fmt.Sprintf("f%02d", i), bytes.Repeat([]byte{byte('A' + i%26)}, 200), ""); err != nil {
			t.Fatal(err)
		}
	}
	if st := f.Stats(); st.CachedBytes > 2<<10 {
		t.Fatalf("cache over its bound: %+v", st)
	}
	for i := range 50 {
		got := read(t, f, fmt.Sprintf("f%02d", i))
		if got != string(bytes.Repeat([]byte{byte('A' + i%26)}, 200)) {
			t.Fatalf("f%02d = %q", i, got)
		}
	}
	f.Close()
}

func TestRefusedCallsWriteNothing(t *testing.T) {
	ctx := context.Background()
	d := NewMemDir()
	f := open(t, d, Options{})
	v, _ := f.WriteFile(ctx, "file", []byte("x"), "")
	f.MkdirAll(ctx, "dir")
	size := f.Stats().LogBytes
	cases := []struct {
		name string
		do   func() error
		want error
	}{
		{"write over dir", func() error { _, err := f.WriteFile(ctx, "dir", nil, ""); return err }, workspace.ErrIsDir},
		{"write under file", func() error { _, err := f.WriteFile(ctx, "file/x", nil, ""); return err }, workspace.ErrNotDir},
		{"stale version", func() error { _, err := f.WriteFile(ctx, "file", nil, v+"0"); return err }, workspace.ErrConflict},
		{"mkdir under file", func() error { return f.MkdirAll(ctx, "file/d") }, workspace.ErrNotDir},
		{"remove missing", func() error { return f.Remove(ctx, "nope") }, fs.ErrNotExist},
		{"rename onto dir", func() error { return f.Rename(ctx, "file", "dir") }, fs.ErrExist},
		{"rename under file", func() error { return f.Rename(ctx, "dir", "file/d") }, workspace.ErrNotDir},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := c.do(); !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if got := f.Stats().LogBytes; got != size {
				t.Fatalf("log grew from %d to %d on a refused call", size, got)
			}
		})
	}
	f.Close()
}

func TestOneOpenPerRoot(t *testing.T) {
	d := NewMemDir()
	f := open(t, d, Options{})
	if _, err := OpenDir(context.Background(), d, Options{}); err == nil {
		t.Fatal("a second OpenDir on an open root succeeded")
	}
	f.Close()
	if _, _, err := f.ReadFile(context.Background(), "x"); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("read after close: %v, want fs.ErrClosed", err)
	}
	g := open(t, d, Options{})
	g.Close()
}

// TestPutFileBatches checks the bulk-load path: PutFile records are
// applied at once, go out in large writes, become durable within the
// flush delay without any other call, and replay like written files.
func TestPutFileBatches(t *testing.T) {
	ctx := context.Background()
	d := NewMemDir()
	f := open(t, d, Options{})
	name := logName(f.Stats().Generation)
	before := len(d.Bytes(name))
	ws, _ := workspace.New(f)
	for i := range 200 {
		if err := ws.PutFile(ctx, fmt.Sprintf("src/f%03d.txt", i), []byte(fmt.Sprintf("file %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	if got := read(t, f, "src/f123.txt"); got != "file 123\n" {
		t.Fatalf("read before the flush: %q", got)
	}
	if err := ws.PutFile(ctx, "src/f000.txt/x", nil); !errors.Is(err, workspace.ErrNotDir) {
		t.Fatalf("PutFile under a file: %v, want ErrNotDir", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(d.Bytes(name)) == before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(d.Bytes(name)) == before {
		t.Fatal("loaded files were not written within 5 s of the last PutFile")
	}
	// A copy of the log as it is now (no Close) replays every loaded file.
	cd := NewMemDir()
	cd.SetBytes(name, d.Bytes(name))
	g := open(t, cd, Options{})
	if n := len(state(t, g)); n != 201 { // 200 files + src/
		t.Fatalf("replayed %d entries, want 201", n)
	}
	g.Close()
	f.Close()
}
