package workspacetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/a3s-lab/code-wasm/workspace"
)

// Harness makes the drivers the suite tests, as go-cloud's drivertest
// harness does: New for every test, and Reopen, when the driver's storage
// outlives it, to check that what was written survives.
type Harness struct {
	// New returns a driver over fresh, empty storage; every test gets its
	// own, and some tests take two. It should close the driver in a
	// t.Cleanup.
	New func(t *testing.T) workspace.Driver
	// Reopen closes d and returns a new driver over the storage d used, as
	// the next session would open it (and closes that one in a
	// t.Cleanup). Nil when nothing outlives a driver (memfs): the checks
	// of reopening are skipped then.
	Reopen func(t *testing.T, d workspace.Driver) workspace.Driver
	// Steps is the number of random changes each extra is checked
	// after (testExtra); 0 means 150. A driver whose every call is a
	// host round trip (dirfs under js/wasm, where the same Go code also
	// passes 150 natively) may take fewer.
	Steps int
}

// Run runs the whole suite over drivers from newDriver, which must return
// a fresh, empty driver for every call: RunHarness without Reopen.
func Run(t *testing.T, newDriver func(t *testing.T) workspace.Driver) {
	RunHarness(t, Harness{New: newDriver})
}

// RunHarness runs the whole suite. Drivers are exercised through
// workspace.New, never directly. The driver must declare Read; the tests
// that write are skipped for a driver without Write. Each optional extra
// the driver implements (workspace.Driver's doc lists them) is checked
// against the workspace's fallback for it, after every step of a random
// sequence of changes. With h.Reopen, every test ends by reopening the
// driver and comparing what it holds with what it held.
func RunHarness(t *testing.T, h Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"Capabilities", testCapabilities},
		{"ReadAfterWrite", testReadAfterWrite},
		{"MissingPaths", testMissingPaths},
		{"Overwrite", testOverwrite},
		{"ParentCreation", testParentCreation},
		{"ListRoot", testListRoot},
		{"ListingShowsNewEntry", testListingShowsNewEntry},
		{"CAS/VersionTokensNonEmpty", testVersionTokensNonEmpty},
		{"CAS/VersionIsContentHash", testVersionIsContentHash},
		{"CAS/MatchingVersionWrites", testMatchingVersionWrites},
		{"CAS/StaleVersionConflicts", testStaleVersionConflicts},
		{"CAS/MissingFileConflicts", testMissingFileConflicts},
		{"CAS/EmptyVersionRejected", testEmptyVersionRejected},
		{"Stat", testStat},
		{"ReadLines", testReadLines},
		{"AppendFile", testAppendFile},
		{"PutFile", testPutFile},
		{"MkdirAll", testMkdirAll},
		{"Remove", testRemove},
		{"Rename", testRename},
		{"Walk", testWalk},
		{"WalkDuringWrites", testWalkDuringWrites},
		{"Walk/AfterEveryChange", testWalkAfterEveryChange},
		{"Walk/IntoChangedDirectory", testWalkIntoChangedDirectory},
		{"IsDirNotDir", testIsDirNotDir},
		{"RejectedPathsChangeNothing", testRejectedPaths},
		{"ErrorsNameThePath", testErrorsNameThePath},
		{"CancelledContext", testCancelledContext},
		{"LargeFile", testLargeFile},
		{"Concurrent/CASCounter", testConcurrentCAS},
		{"Concurrent/Appends", testConcurrentAppends},
		{"Concurrent/FirstVersionAfterPut", testConcurrentFirstVersion},
		{"Concurrent/WritersAndWalkers", testConcurrentWritersAndWalkers},
		{"Concurrent/WalkWhileRenaming", testWalkWhileRenaming},
		{"FS/TestFS", testFSTestFS},
		{"FS/ReadFileCopies", testFSReadFileCopies},
		{"FS/Errors", testFSErrors},
		{"FS/WalkDirAgrees", testFSWalkDirAgrees},
		{"Reopen", testReopen},
	}
	for _, x := range extras {
		tests = append(tests, struct {
			name string
			fn   func(t *testing.T, e *env)
		}{"Extras/" + x.name, func(t *testing.T, e *env) { testExtra(t, e, x) }})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := &env{t: t, h: h, ctx: context.Background()}
			e.ws = e.fresh()
			caps := e.ws.Capabilities()
			if !caps.Read {
				t.Fatalf("driver %T does not declare Read; the suite needs it", e.ws.Driver())
			}
			if !caps.Write && tc.name != "Capabilities" {
				t.Skipf("driver %T does not declare Write", e.ws.Driver())
			}
			tc.fn(t, e)
			if h.Reopen != nil && caps.Write && !t.Failed() {
				e.reopen("at the end of the test")
			}
		})
	}
}

// env holds one fresh workspace; its helpers fail the test on error.
type env struct {
	t   *testing.T
	h   Harness
	ws  *workspace.Workspace
	ctx context.Context
}

// fresh returns a workspace over a new driver from the harness.
func (e *env) fresh() *workspace.Workspace {
	e.t.Helper()
	d := e.h.New(e.t)
	ws, err := workspace.New(d)
	if err != nil {
		e.t.Fatalf("workspace.New: %v", err)
	}
	return ws
}

func (e *env) write(p, s string) workspace.Version {
	e.t.Helper()
	v, err := e.ws.WriteFile(e.ctx, p, []byte(s))
	if err != nil {
		e.t.Fatalf("WriteFile(%q): %v", p, err)
	}
	return v
}

func (e *env) mkdir(p string) {
	e.t.Helper()
	if err := e.ws.MkdirAll(e.ctx, p); err != nil {
		e.t.Fatalf("MkdirAll(%q): %v", p, err)
	}
}

func (e *env) read(p string) string {
	e.t.Helper()
	b, _, err := e.ws.ReadFile(e.ctx, p)
	if err != nil {
		e.t.Fatalf("ReadFile(%q): %v", p, err)
	}
	return string(b)
}

func (e *env) seed(files ...string) {
	e.t.Helper()
	for _, f := range files {
		if strings.HasSuffix(f, "/") {
			e.mkdir(f)
			continue
		}
		e.write(f, "content of "+f)
	}
}

// snapshot maps every path to "dir" or "file:<content>".
func (e *env) snapshot() map[string]string {
	e.t.Helper()
	m := map[string]string{}
	err := e.ws.Walk(e.ctx, ".", func(p string, en workspace.Entry) error {
		if en.Kind == workspace.KindDir {
			m[p] = "dir"
			return nil
		}
		b, _, err := e.ws.ReadFile(e.ctx, p)
		if err != nil {
			return err
		}
		m[p] = "file:" + string(b)
		return nil
	})
	if err != nil {
		e.t.Fatalf("snapshot walk: %v", err)
	}
	return m
}

func (e *env) unchanged(before map[string]string, what string) {
	e.t.Helper()
	after := e.snapshot()
	for p, v := range before {
		if a, ok := after[p]; !ok {
			e.t.Errorf("%s: %s disappeared", what, p)
		} else if a != v {
			e.t.Errorf("%s: %s changed from %.40q to %.40q", what, p, v, a)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			e.t.Errorf("%s: %s appeared", what, p)
		}
	}
}

func (e *env) missing(p string) {
	e.t.Helper()
	if _, err := e.ws.Stat(e.ctx, p); !errors.Is(err, fs.ErrNotExist) {
		e.t.Errorf("Stat(%q) = %v; want fs.ErrNotExist", p, err)
	}
}

func (e *env) names(dir string) []string {
	e.t.Helper()
	es, err := e.ws.ReadDir(e.ctx, dir)
	if err != nil {
		e.t.Fatalf("ReadDir(%q): %v", dir, err)
	}
	out := make([]string, len(es))
	for i, en := range es {
		out[i] = en.Name
		if en.Kind == workspace.KindDir {
			out[i] += "/"
		}
	}
	return out
}

func (e *env) walk(root string) []string {
	e.t.Helper()
	var got []string
	err := e.ws.Walk(e.ctx, root, func(p string, en workspace.Entry) error {
		if en.Kind == workspace.KindDir {
			p += "/"
		}
		got = append(got, p)
		return nil
	})
	if err != nil {
		e.t.Fatalf("Walk(%q): %v", root, err)
	}
	return got
}

func wantIs(t *testing.T, what string, err error, targets ...error) {
	t.Helper()
	for _, target := range targets {
		if errors.Is(err, target) {
			return
		}
	}
	t.Errorf("%s: error = %v; want one of %v", what, err, targets)
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Errorf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func testCapabilities(t *testing.T, e *env) {
	if got, want := e.ws.Capabilities(), e.ws.Driver().Capabilities(); got != want {
		t.Fatalf("workspace capabilities %+v differ from the driver's %+v", got, want)
	}
}

func testReadAfterWrite(t *testing.T, e *env) {
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	cases := []struct {
		name, path string
		data       []byte
	}{
		{"text", "a.txt", []byte("hello\n")},
		{"empty", "empty.txt", []byte{}},
		{"binary with NUL", "bin.dat", binary},
		{"nested", "dir/deep/n.txt", []byte("nested")},
		{"space in name", "with space.txt", []byte("x")},
		{"unicode name", "données/日本.txt", []byte("ünïcödé")},
		{"dotfile", ".env", []byte("K=V")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := e.ws.WriteFile(e.ctx, c.path, bytes.Clone(c.data))
			if err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			got, rv, err := e.ws.ReadFile(e.ctx, c.path)
			if err != nil {
				t.Fatalf("ReadFile: %v", err)
			}
			if !bytes.Equal(got, c.data) {
				t.Errorf("read %q; wrote %q", got, c.data)
			}
			if rv != v {
				t.Errorf("read version %q; write returned %q", rv, v)
			}
			st, err := e.ws.Stat(e.ctx, c.path)
			if err != nil {
				t.Fatalf("Stat: %v", err)
			}
			if st.Kind != workspace.KindFile || st.Size != int64(len(c.data)) {
				t.Errorf("Stat = %+v; want a file of %d bytes", st, len(c.data))
			}
		})
	}
}

func testMissingPaths(t *testing.T, e *env) {
	e.seed("f.txt", "d/x.txt")
	before := e.snapshot()
	ops := []struct {
		name string
		fn   func(p string) error
	}{
		{"Stat", func(p string) error { _, err := e.ws.Stat(e.ctx, p); return err }},
		{"ReadFile", func(p string) error { _, _, err := e.ws.ReadFile(e.ctx, p); return err }},
		{"ReadLines", func(p string) error { _, err := e.ws.ReadLines(e.ctx, p, 0, 10); return err }},
		{"ReadDir", func(p string) error { _, err := e.ws.ReadDir(e.ctx, p); return err }},
		{"Remove", func(p string) error { return e.ws.Remove(e.ctx, p) }},
		{"RenameFrom", func(p string) error { return e.ws.Rename(e.ctx, p, "renamed") }},
		{"RenameOntoItself", func(p string) error { return e.ws.Rename(e.ctx, p, p) }},
		{"Walk", func(p string) error { return e.ws.Walk(e.ctx, p, func(string, workspace.Entry) error { return nil }) }},
	}
	for _, op := range ops {
		for _, p := range []string{"missing.txt", "d/missing.txt", "no/such/dir/f.txt"} {
			t.Run(op.name+"/"+p, func(t *testing.T) {
				err := op.fn(p)
				wantIs(t, op.name+"("+p+")", err, fs.ErrNotExist)
				var pe *workspace.PathError
				if err != nil && !errors.As(err, &pe) {
					t.Errorf("%s(%q) error %T is not a *workspace.PathError", op.name, p, err)
				}
			})
		}
		t.Run(op.name+"/under a file", func(t *testing.T) {
			wantIs(t, op.name+"(f.txt/x)", op.fn("f.txt/x"), fs.ErrNotExist, workspace.ErrNotDir)
		})
	}
	e.unchanged(before, "operations on missing paths")
}

func testOverwrite(t *testing.T, e *env) {
	v1 := e.write("f.txt", "a much longer first content")
	v2 := e.write("f.txt", "short")
	if got := e.read("f.txt"); got != "short" {
		t.Fatalf("after overwrite read %q; want %q", got, "short")
	}
	if v1 == v2 {
		t.Errorf("overwrite with different content kept version %q", v1)
	}
	st, err := e.ws.Stat(e.ctx, "f.txt")
	if err != nil || st.Size != 5 {
		t.Errorf("Stat after overwrite = %+v, %v; want size 5", st, err)
	}
	equal(t, "root listing", e.names("."), []string{"f.txt"})
	v3 := e.write("f.txt", "short")
	if v3 != v2 {
		t.Errorf("rewriting the same bytes changed the version: %q then %q", v2, v3)
	}
}

func testParentCreation(t *testing.T, e *env) {
	e.write("a/b/c/d.txt", "deep")
	for _, dir := range []string{"a", "a/b", "a/b/c"} {
		st, err := e.ws.Stat(e.ctx, dir)
		if err != nil || st.Kind != workspace.KindDir {
			t.Errorf("Stat(%q) = %+v, %v; want a directory", dir, st, err)
		}
	}
	equal(t, "ReadDir(a/b)", e.names("a/b"), []string{"c/"})
	equal(t, "ReadDir(a/b/c)", e.names("a/b/c"), []string{"d.txt"})
	if got := e.read("a/b/c/d.txt"); got != "deep" {
		t.Errorf("read %q", got)
	}
}

func testListRoot(t *testing.T, e *env) {
	for _, root := range []string{".", "", "./"} {
		if got := e.names(root); len(got) != 0 {
			t.Fatalf("empty workspace ReadDir(%q) = %q", root, got)
		}
	}
	e.write("c.txt", "ccc")
	e.write("a/x", "x")
	e.write("b.txt", "bb")
	es, err := e.ws.ReadDir(e.ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	want := []workspace.Entry{
		{Name: "a", Kind: workspace.KindDir},
		{Name: "b.txt", Kind: workspace.KindFile, Size: 2},
		{Name: "c.txt", Kind: workspace.KindFile, Size: 3},
	}
	if len(es) != len(want) {
		t.Fatalf("ReadDir(.) = %+v; want %d entries", es, len(want))
	}
	for i, w := range want {
		g := es[i]
		if g.Name != w.Name || g.Kind != w.Kind || (w.Kind == workspace.KindFile && g.Size != w.Size) {
			t.Errorf("entry %d = %+v; want %+v", i, g, w)
		}
		if w.Kind == workspace.KindFile && g.ModTime.IsZero() {
			t.Errorf("entry %s has no modification time", g.Name)
		}
	}
	st, err := e.ws.Stat(e.ctx, ".")
	if err != nil || st.Kind != workspace.KindDir {
		t.Errorf("Stat(.) = %+v, %v; want a directory", st, err)
	}
}

func testListingShowsNewEntry(t *testing.T, e *env) {
	e.write("d/one", "1")
	equal(t, "before", e.names("d"), []string{"one"})
	e.write("d/two", "22")
	equal(t, "after a write", e.names("d"), []string{"one", "two"})
	e.mkdir("d/sub")
	equal(t, "after a mkdir", e.names("d"), []string{"one", "sub/", "two"})
	e.write("d/0first", "")
	equal(t, "after another write", e.names("d"), []string{"0first", "one", "sub/", "two"})
	es, _ := e.ws.ReadDir(e.ctx, "d")
	for _, en := range es {
		if en.Name == "two" && en.Size != 2 {
			t.Errorf("new entry size %d; want 2", en.Size)
		}
	}
}

func testVersionTokensNonEmpty(t *testing.T, e *env) {
	for _, s := range []string{"", "x", "hello\n"} {
		v := e.write("f.txt", s)
		_, rv, err := e.ws.ReadFile(e.ctx, "f.txt")
		if err != nil {
			t.Fatal(err)
		}
		if v == "" || rv == "" {
			t.Errorf("content %q: write version %q, read version %q; want non-empty", s, v, rv)
		}
		if v != rv {
			t.Errorf("content %q: write version %q != read version %q", s, v, rv)
		}
	}
}

func testVersionIsContentHash(t *testing.T, e *env) {
	va := e.write("a.txt", "same")
	vb := e.write("dir/b.txt", "same")
	vc := e.write("c.txt", "different")
	if va != vb {
		t.Errorf("same bytes, different versions: %q, %q", va, vb)
	}
	if va == vc {
		t.Errorf("different bytes, same version %q", va)
	}
	if want := workspace.VersionOf([]byte("same")); va != want {
		t.Errorf("version %q; want workspace.VersionOf = %q (built-in drivers agree on tokens)", va, want)
	}
}

func testMatchingVersionWrites(t *testing.T, e *env) {
	v1 := e.write("f.txt", "one")
	v2, err := e.ws.WriteFileIfVersion(e.ctx, "f.txt", []byte("two"), v1)
	if err != nil {
		t.Fatalf("WriteFileIfVersion with the current version: %v", err)
	}
	if got := e.read("f.txt"); got != "two" {
		t.Errorf("read %q; want %q", got, "two")
	}
	_, rv, _ := e.ws.ReadFile(e.ctx, "f.txt")
	if v2 == v1 || v2 != rv {
		t.Errorf("versions: before %q, returned %q, read %q", v1, v2, rv)
	}
	if _, err := e.ws.WriteFileIfVersion(e.ctx, "f.txt", []byte("three"), v2); err != nil {
		t.Errorf("chained WriteFileIfVersion: %v", err)
	}
}

func testStaleVersionConflicts(t *testing.T, e *env) {
	v1 := e.write("f.txt", "one")
	v2 := e.write("f.txt", "two")
	before := e.snapshot()
	_, err := e.ws.WriteFileIfVersion(e.ctx, "f.txt", []byte("three"), v1)
	wantIs(t, "stale write", err, workspace.ErrConflict)
	var ce *workspace.ConflictError
	if errors.As(err, &ce) {
		if ce.Expected != v1 || ce.Actual != v2 {
			t.Errorf("ConflictError expected %q actual %q; want %q and %q", ce.Expected, ce.Actual, v1, v2)
		}
	} else {
		t.Errorf("stale write error %T is not a *workspace.ConflictError", err)
	}
	e.unchanged(before, "stale write")
}

func testMissingFileConflicts(t *testing.T, e *env) {
	_, err := e.ws.WriteFileIfVersion(e.ctx, "new.txt", []byte("x"), workspace.VersionOf([]byte("x")))
	wantIs(t, "versioned write to a missing file", err, workspace.ErrConflict)
	e.missing("new.txt")
}

func testEmptyVersionRejected(t *testing.T, e *env) {
	e.write("f.txt", "keep")
	before := e.snapshot()
	for _, p := range []string{"f.txt", "new.txt"} {
		if _, err := e.ws.WriteFileIfVersion(e.ctx, p, []byte("x"), ""); err == nil {
			t.Errorf("WriteFileIfVersion(%q) with an empty version succeeded", p)
		} else if !strings.Contains(err.Error(), "version") {
			t.Errorf("empty-version error %q does not say what was wrong", err)
		}
	}
	e.unchanged(before, "empty-version writes")
}

func testStat(t *testing.T, e *env) {
	e.write("d/f.txt", "12345")
	cases := []struct {
		path, name string
		kind       workspace.Kind
		size       int64
	}{
		{"d/f.txt", "f.txt", workspace.KindFile, 5},
		{"d", "d", workspace.KindDir, -1},
		{"./d/", "d", workspace.KindDir, -1},
		{`d\f.txt`, "f.txt", workspace.KindFile, 5},
		{".", ".", workspace.KindDir, -1},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			st, err := e.ws.Stat(e.ctx, c.path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Name != c.name || st.Kind != c.kind || (c.size >= 0 && st.Size != c.size) {
				t.Errorf("Stat(%q) = %+v; want name %q kind %s size %d", c.path, st, c.name, c.kind, c.size)
			}
			if c.kind == workspace.KindFile && st.ModTime.IsZero() {
				t.Errorf("Stat(%q) has no modification time", c.path)
			}
		})
	}
}

func testReadLines(t *testing.T, e *env) {
	cases := []struct {
		name          string
		content       string
		offset, limit int
		lines         []string
		total         int
		eof           bool
	}{
		{"LF", "a\nb\nc\n", 0, 0, []string{"a", "b", "c"}, 3, true},
		{"CRLF", "a\r\nb\r\nc\r\n", 0, 0, []string{"a", "b", "c"}, 3, true},
		{"mixed endings", "a\r\nb\nc", 0, 0, []string{"a", "b", "c"}, 3, true},
		{"no final newline", "a\nb", 0, 0, []string{"a", "b"}, 2, true},
		{"range", "1\n2\n3\n4\n5\n", 1, 2, []string{"2", "3"}, 5, false},
		{"range to end", "1\n2\n3\n4\n5\n", 3, 10, []string{"4", "5"}, 5, true},
		{"range ends exactly", "1\n2\n3\n", 1, 2, []string{"2", "3"}, 3, true},
		{"offset at end", "1\n2\n", 2, 5, nil, 2, true},
		{"offset past end", "1\n2\n", 10, 5, nil, 2, true},
		{"empty file", "", 0, 10, nil, 0, true},
		{"blank lines kept", "a\n\nb\n", 0, 0, []string{"a", "", "b"}, 3, true},
		{"only a newline", "\n", 0, 0, []string{""}, 1, true},
		{"CR inside a line kept", "a\rb\n", 0, 0, []string{"a\rb"}, 1, true},
		{"limit one", "x\ny\n", 0, 1, []string{"x"}, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := "lines/" + strings.ReplaceAll(c.name, " ", "_") + ".txt"
			e.write(p, c.content)
			r, err := e.ws.ReadLines(e.ctx, p, c.offset, c.limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Lines) != len(c.lines) || (len(c.lines) > 0 && !slices.Equal(r.Lines, c.lines)) {
				t.Errorf("lines %q; want %q", r.Lines, c.lines)
			}
			if r.TotalLines != c.total || r.EOF != c.eof || r.Offset != c.offset {
				t.Errorf("total %d eof %v offset %d; want %d %v %d", r.TotalLines, r.EOF, r.Offset, c.total, c.eof, c.offset)
			}
		})
	}
	t.Run("negative offset", func(t *testing.T) {
		e.write("n.txt", "a\n")
		if _, err := e.ws.ReadLines(e.ctx, "n.txt", -1, 1); err == nil {
			t.Error("negative offset accepted")
		}
	})
}

func testAppendFile(t *testing.T, e *env) {
	t.Run("creates a missing file and its parents", func(t *testing.T) {
		v, err := e.ws.AppendFile(e.ctx, "log/new.txt", []byte("a"), "")
		if err != nil {
			t.Fatal(err)
		}
		if got := e.read("log/new.txt"); got != "a" {
			t.Errorf("read %q", got)
		}
		if v != workspace.VersionOf([]byte("a")) {
			t.Errorf("version %q", v)
		}
	})
	t.Run("appends without a version", func(t *testing.T) {
		e.write("f.txt", "a\n")
		v, err := e.ws.AppendFile(e.ctx, "f.txt", []byte("b\n"), "")
		if err != nil {
			t.Fatal(err)
		}
		if got := e.read("f.txt"); got != "a\nb\n" {
			t.Errorf("read %q", got)
		}
		if _, rv, _ := e.ws.ReadFile(e.ctx, "f.txt"); rv != v {
			t.Errorf("append returned %q, read %q", v, rv)
		}
	})
	t.Run("appends with the current version", func(t *testing.T) {
		v := e.write("g.txt", "x")
		if _, err := e.ws.AppendFile(e.ctx, "g.txt", []byte("y"), v); err != nil {
			t.Fatal(err)
		}
		if got := e.read("g.txt"); got != "xy" {
			t.Errorf("read %q", got)
		}
	})
	t.Run("stale version conflicts", func(t *testing.T) {
		v := e.write("h.txt", "1")
		e.write("h.txt", "2")
		before := e.snapshot()
		_, err := e.ws.AppendFile(e.ctx, "h.txt", []byte("3"), v)
		wantIs(t, "stale append", err, workspace.ErrConflict)
		e.unchanged(before, "stale append")
	})
	t.Run("version on a missing file conflicts", func(t *testing.T) {
		_, err := e.ws.AppendFile(e.ctx, "nope.txt", []byte("3"), workspace.VersionOf(nil))
		wantIs(t, "versioned append to a missing file", err, workspace.ErrConflict)
		e.missing("nope.txt")
	})
	t.Run("empty data", func(t *testing.T) {
		v := e.write("e.txt", "same")
		nv, err := e.ws.AppendFile(e.ctx, "e.txt", nil, v)
		if err != nil || nv != v || e.read("e.txt") != "same" {
			t.Errorf("empty append: version %q -> %q, err %v, content %q", v, nv, err, e.read("e.txt"))
		}
	})
}

func testMkdirAll(t *testing.T, e *env) {
	e.mkdir("x/y/z")
	for _, d := range []string{"x", "x/y", "x/y/z"} {
		st, err := e.ws.Stat(e.ctx, d)
		if err != nil || st.Kind != workspace.KindDir {
			t.Errorf("Stat(%q) = %+v, %v", d, st, err)
		}
	}
	if got := e.names("x/y/z"); len(got) != 0 {
		t.Errorf("new directory lists %q", got)
	}
	e.write("x/y/z/f", "keep")
	e.mkdir("x/y/z") // idempotent, keeps content
	e.mkdir(".")
	if e.read("x/y/z/f") != "keep" {
		t.Error("MkdirAll on an existing directory lost its content")
	}
	e.write("file", "f")
	before := e.snapshot()
	wantIs(t, "MkdirAll through a file", e.ws.MkdirAll(e.ctx, "file/sub"), workspace.ErrNotDir)
	wantIs(t, "MkdirAll on a file", e.ws.MkdirAll(e.ctx, "file"), workspace.ErrNotDir, fs.ErrExist)
	e.unchanged(before, "failed MkdirAll")
}

func testRemove(t *testing.T, e *env) {
	e.seed("f.txt", "keep.txt", "t/a/b.txt", "t/c.txt", "t/d/", "t2/x", "t.txt", "t-x/y")
	if err := e.ws.Remove(e.ctx, "f.txt"); err != nil {
		t.Fatalf("Remove file: %v", err)
	}
	e.missing("f.txt")
	if err := e.ws.Remove(e.ctx, "t"); err != nil {
		t.Fatalf("Remove tree: %v", err)
	}
	for _, p := range []string{"t", "t/a", "t/a/b.txt", "t/c.txt", "t/d"} {
		e.missing(p)
	}
	equal(t, "what is left", e.walk("."), []string{"keep.txt", "t-x/", "t-x/y", "t.txt", "t2/", "t2/x"})
	before := e.snapshot()
	wantIs(t, "Remove missing", e.ws.Remove(e.ctx, "t"), fs.ErrNotExist)
	if err := e.ws.Remove(e.ctx, "."); err == nil {
		t.Error("Remove(.) succeeded")
	}
	if err := e.ws.Remove(e.ctx, ""); err == nil {
		t.Error(`Remove("") succeeded`)
	}
	e.unchanged(before, "refused removes")
	e.write("t/a/b.txt", "again")
	equal(t, "recreated tree", e.walk("t"), []string{"t/a/", "t/a/b.txt"})
}

func testRename(t *testing.T, e *env) {
	t.Run("file", func(t *testing.T) {
		v := e.write("r1/a.txt", "A")
		if err := e.ws.Rename(e.ctx, "r1/a.txt", "r1/b.txt"); err != nil {
			t.Fatal(err)
		}
		e.missing("r1/a.txt")
		b, rv, err := e.ws.ReadFile(e.ctx, "r1/b.txt")
		if err != nil || string(b) != "A" || rv != v {
			t.Errorf("renamed file: %q %q %v; want %q %q", b, rv, err, "A", v)
		}
		equal(t, "listing", e.names("r1"), []string{"b.txt"})
	})
	t.Run("directory", func(t *testing.T) {
		e.seed("r2/src/a.go", "r2/src/sub/b.go", "r2/src/empty/", "r2/src2/x", "r2/src.txt")
		if err := e.ws.Rename(e.ctx, "r2/src", "r2/lib"); err != nil {
			t.Fatal(err)
		}
		equal(t, "after", e.walk("r2"), []string{
			"r2/lib/", "r2/lib/a.go", "r2/lib/empty/", "r2/lib/sub/", "r2/lib/sub/b.go", "r2/src.txt", "r2/src2/", "r2/src2/x",
		})
		if got := e.read("r2/lib/sub/b.go"); got != "content of r2/src/sub/b.go" {
			t.Errorf("moved content %q", got)
		}
		e.missing("r2/src/a.go")
		e.write("r2/src/new", "n") // the old name is free again
		equal(t, "old name reused", e.walk("r2/src"), []string{"r2/src/new"})
	})
	t.Run("directory to another parent", func(t *testing.T) {
		e.seed("r3/a/b/c.txt", "r3/x/")
		if err := e.ws.Rename(e.ctx, "r3/a/b", "r3/x/b2"); err != nil {
			t.Fatal(err)
		}
		equal(t, "after", e.walk("r3"), []string{"r3/a/", "r3/x/", "r3/x/b2/", "r3/x/b2/c.txt"})
	})
	t.Run("onto a file", func(t *testing.T) {
		e.write("r4/a", "new")
		e.write("r4/b", "old")
		if err := e.ws.Rename(e.ctx, "r4/a", "r4/b"); err != nil {
			t.Fatal(err)
		}
		e.missing("r4/a")
		if got := e.read("r4/b"); got != "new" {
			t.Errorf("target holds %q; want the moved content", got)
		}
		equal(t, "listing", e.names("r4"), []string{"b"})
	})
	t.Run("into a missing parent", func(t *testing.T) {
		e.write("r5/a", "A")
		if err := e.ws.Rename(e.ctx, "r5/a", "r5/new/deep/a"); err != nil {
			t.Fatal(err)
		}
		equal(t, "after", e.walk("r5"), []string{"r5/new/", "r5/new/deep/", "r5/new/deep/a"})
	})
	t.Run("same name", func(t *testing.T) {
		e.write("r6/a", "A")
		before := e.snapshot()
		if err := e.ws.Rename(e.ctx, "r6/a", "./r6//a"); err != nil {
			t.Errorf("rename onto itself: %v", err)
		}
		e.unchanged(before, "rename onto itself")
	})
	refused := []struct {
		name, from, to string
		want           []error
	}{
		{"file onto a directory", "rx/f", "rx/d", []error{fs.ErrExist}},
		{"directory onto a directory", "rx/d", "rx/d2", []error{fs.ErrExist}},
		{"directory onto a file", "rx/d", "rx/f", nil},
		{"directory into itself", "rx/d", "rx/d/sub", nil},
		{"directory into its child", "rx/d", "rx/d/in/deeper", nil},
		{"missing source", "rx/missing", "rx/g", []error{fs.ErrNotExist}},
		{"parent is a file", "rx/f", "rx/f/x", []error{workspace.ErrNotDir, fs.ErrExist}},
		{"root", ".", "rx/root", nil},
		{"onto the root", "rx/f", ".", nil},
	}
	for _, c := range refused {
		t.Run("refused/"+c.name, func(t *testing.T) {
			e.seed("rx/f", "rx/d/in", "rx/d2/y")
			before := e.snapshot()
			err := e.ws.Rename(e.ctx, c.from, c.to)
			if err == nil {
				t.Fatalf("Rename(%q, %q) succeeded", c.from, c.to)
			}
			if c.want != nil {
				wantIs(t, "Rename", err, c.want...)
			}
			e.unchanged(before, "refused rename")
		})
	}
}

var walkTree = []string{"b.txt", "a/z.txt", "a/b/c.txt", "a.txt", "a-b/x", "c/"}

func testWalk(t *testing.T, e *env) {
	e.seed(walkTree...)
	all := []string{"a/", "a/b/", "a/b/c.txt", "a/z.txt", "a-b/", "a-b/x", "a.txt", "b.txt", "c/"}
	equal(t, "Walk(.)", e.walk("."), all)
	equal(t, "Walk(\"\")", e.walk(""), all)
	equal(t, "Walk(a)", e.walk("a"), []string{"a/b/", "a/b/c.txt", "a/z.txt"})
	equal(t, "Walk(c)", e.walk("c"), nil)

	stop := errors.New("stop here")
	cases := []struct {
		name    string
		at      string
		ret     error
		visited []string
		err     error
	}{
		{"SkipDir on a directory", "a/b", fs.SkipDir, []string{"a", "a/b", "a/z.txt", "a-b", "a-b/x", "a.txt", "b.txt", "c"}, nil},
		{"SkipDir on a file skips the rest of its directory", "a-b/x", fs.SkipDir, []string{"a", "a/b", "a/b/c.txt", "a/z.txt", "a-b", "a-b/x", "a.txt", "b.txt", "c"}, nil},
		{"SkipDir on a root file", "a.txt", fs.SkipDir, []string{"a", "a/b", "a/b/c.txt", "a/z.txt", "a-b", "a-b/x", "a.txt"}, nil},
		{"SkipAll", "a/b/c.txt", fs.SkipAll, []string{"a", "a/b", "a/b/c.txt"}, nil},
		{"error stops the walk", "a/z.txt", stop, []string{"a", "a/b", "a/b/c.txt", "a/z.txt"}, stop},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			err := e.ws.Walk(e.ctx, ".", func(p string, _ workspace.Entry) error {
				got = append(got, p)
				if p == c.at {
					return c.ret
				}
				return nil
			})
			if c.err == nil && err != nil || c.err != nil && !errors.Is(err, c.err) {
				t.Errorf("Walk error %v; want %v", err, c.err)
			}
			equal(t, "visited", got, c.visited)
		})
	}
	t.Run("entries agree with Stat", func(t *testing.T) {
		err := e.ws.Walk(e.ctx, ".", func(p string, en workspace.Entry) error {
			st, err := e.ws.Stat(e.ctx, p)
			if err != nil {
				return err
			}
			if st.Name != en.Name || st.Kind != en.Kind || (en.Kind == workspace.KindFile && st.Size != en.Size) {
				t.Errorf("walk entry %+v; Stat %+v", en, st)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})
	t.Run("file root", func(t *testing.T) {
		err := e.ws.Walk(e.ctx, "a.txt", func(string, workspace.Entry) error { return nil })
		wantIs(t, "Walk(a.txt)", err, workspace.ErrNotDir)
	})
}

// testWalkDuringWrites checks fn runs without driver locks: it writes,
// removes and renames from inside the walk, which deadlocks a driver that
// holds a lock across the callback.
func testWalkDuringWrites(t *testing.T, e *env) {
	e.seed(walkTree...)
	var got []string
	err := e.ws.Walk(e.ctx, ".", func(p string, en workspace.Entry) error {
		got = append(got, p)
		switch p {
		case "a/b":
			if _, err := e.ws.WriteFile(e.ctx, "a/b/new.txt", []byte("n")); err != nil {
				return err
			}
		case "a/b/c.txt":
			if err := e.ws.Remove(e.ctx, "a/z.txt"); err != nil {
				return err
			}
		case "a-b":
			if err := e.ws.Rename(e.ctx, "b.txt", "b2.txt"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk with writes: %v", err)
	}
	if !slices.Contains(got, "a-b/x") || !slices.Contains(got, "c") {
		t.Errorf("walk with writes visited %q", got)
	}
	equal(t, "after", e.walk("."), []string{"a/", "a/b/", "a/b/c.txt", "a/b/new.txt", "a-b/", "a-b/x", "a.txt", "b2.txt", "c/"})
}

func testIsDirNotDir(t *testing.T, e *env) {
	e.seed("d/x.txt", "f.txt")
	v := e.write("f2.txt", "v")
	before := e.snapshot()
	cases := []struct {
		name string
		fn   func() error
		want error
	}{
		{"ReadFile dir", func() error { _, _, err := e.ws.ReadFile(e.ctx, "d"); return err }, workspace.ErrIsDir},
		{"ReadFile root", func() error { _, _, err := e.ws.ReadFile(e.ctx, "."); return err }, workspace.ErrIsDir},
		{"ReadLines dir", func() error { _, err := e.ws.ReadLines(e.ctx, "d", 0, 1); return err }, workspace.ErrIsDir},
		{"WriteFile dir", func() error { _, err := e.ws.WriteFile(e.ctx, "d", []byte("x")); return err }, workspace.ErrIsDir},
		{"WriteFile root", func() error { _, err := e.ws.WriteFile(e.ctx, ".", []byte("x")); return err }, workspace.ErrIsDir},
		{"WriteFileIfVersion dir", func() error { _, err := e.ws.WriteFileIfVersion(e.ctx, "d", []byte("x"), v); return err }, workspace.ErrIsDir},
		{"AppendFile dir", func() error { _, err := e.ws.AppendFile(e.ctx, "d", []byte("x"), ""); return err }, workspace.ErrIsDir},
		{"ReadDir file", func() error { _, err := e.ws.ReadDir(e.ctx, "f.txt"); return err }, workspace.ErrNotDir},
		{"Walk file", func() error {
			return e.ws.Walk(e.ctx, "f.txt", func(string, workspace.Entry) error { return nil })
		}, workspace.ErrNotDir},
		{"WriteFile under a file", func() error { _, err := e.ws.WriteFile(e.ctx, "f.txt/x", []byte("x")); return err }, workspace.ErrNotDir},
		{"WriteFile deep under a file", func() error { _, err := e.ws.WriteFile(e.ctx, "f.txt/x/y", []byte("x")); return err }, workspace.ErrNotDir},
		{"AppendFile under a file", func() error { _, err := e.ws.AppendFile(e.ctx, "f.txt/x", []byte("x"), ""); return err }, workspace.ErrNotDir},
		{"MkdirAll under a file", func() error { return e.ws.MkdirAll(e.ctx, "f.txt/x") }, workspace.ErrNotDir},
		{"Rename under a file", func() error { return e.ws.Rename(e.ctx, "d/x.txt", "f.txt/x") }, workspace.ErrNotDir},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantIs(t, c.name, c.fn(), c.want)
		})
	}
	e.unchanged(before, "ErrIsDir/ErrNotDir calls")
}

func testRejectedPaths(t *testing.T, e *env) {
	e.seed("d/x.txt", "f.txt")
	before := e.snapshot()
	bad := []struct {
		path string
		want error
	}{
		{"../x", workspace.ErrPathEscape},
		{"d/../../x", workspace.ErrPathEscape},
		{`..\x`, workspace.ErrPathEscape},
		{"/etc/passwd", workspace.ErrInvalidPath},
		{"C:/x", workspace.ErrInvalidPath},
		{`\\srv\share`, workspace.ErrInvalidPath},
		{"a\x00b", workspace.ErrInvalidPath},
		{"a\nb", workspace.ErrInvalidPath},
	}
	for _, b := range bad {
		ops := map[string]error{
			"Stat":       func() error { _, err := e.ws.Stat(e.ctx, b.path); return err }(),
			"ReadFile":   func() error { _, _, err := e.ws.ReadFile(e.ctx, b.path); return err }(),
			"WriteFile":  func() error { _, err := e.ws.WriteFile(e.ctx, b.path, []byte("x")); return err }(),
			"AppendFile": func() error { _, err := e.ws.AppendFile(e.ctx, b.path, []byte("x"), ""); return err }(),
			"MkdirAll":   e.ws.MkdirAll(e.ctx, b.path),
			"Remove":     e.ws.Remove(e.ctx, b.path),
			"RenameFrom": e.ws.Rename(e.ctx, b.path, "d/y"),
			"RenameTo":   e.ws.Rename(e.ctx, "f.txt", b.path),
			"Walk":       e.ws.Walk(e.ctx, b.path, func(string, workspace.Entry) error { return nil }),
		}
		for op, err := range ops {
			wantIs(t, fmt.Sprintf("%s(%q)", op, b.path), err, b.want)
		}
	}
	e.unchanged(before, "rejected paths")
}

func testErrorsNameThePath(t *testing.T, e *env) {
	_, _, err := e.ws.ReadFile(e.ctx, "dir/missing.txt")
	var pe *workspace.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("error %T %v is not a *workspace.PathError", err, err)
	}
	if pe.Path != "dir/missing.txt" || !strings.Contains(err.Error(), "dir/missing.txt") {
		t.Errorf("error %q (path %q) does not name dir/missing.txt", err, pe.Path)
	}
	if strings.Count(err.Error(), "dir/missing.txt") != 1 {
		t.Errorf("error %q names the path more than once (wrapped twice?)", err)
	}
}

func testCancelledContext(t *testing.T, e *env) {
	e.seed("d/x.txt")
	before := e.snapshot()
	ctx, cancel := context.WithCancel(e.ctx)
	cancel()
	ops := map[string]error{
		"Stat":      func() error { _, err := e.ws.Stat(ctx, "d/x.txt"); return err }(),
		"ReadFile":  func() error { _, _, err := e.ws.ReadFile(ctx, "d/x.txt"); return err }(),
		"WriteFile": func() error { _, err := e.ws.WriteFile(ctx, "d/new", []byte("x")); return err }(),
		"ReadDir":   func() error { _, err := e.ws.ReadDir(ctx, "d"); return err }(),
		"Remove":    e.ws.Remove(ctx, "d"),
		"Walk":      e.ws.Walk(ctx, ".", func(string, workspace.Entry) error { return nil }),
	}
	for op, err := range ops {
		wantIs(t, op+" with a cancelled context", err, context.Canceled)
	}
	e.unchanged(before, "cancelled calls")

	// Cancelling in the middle of a walk stops it.
	e.seed("w/1/a", "w/2/b", "w/3/c")
	ctx, cancel = context.WithCancel(e.ctx)
	defer cancel()
	n := 0
	err := e.ws.Walk(ctx, "w", func(p string, _ workspace.Entry) error {
		n++
		if p == "w/1" {
			cancel()
		}
		return nil
	})
	wantIs(t, "Walk cancelled midway", err, context.Canceled)
	if n >= 6 {
		t.Errorf("cancelled walk still visited all %d entries", n)
	}
}

func testLargeFile(t *testing.T, e *env) {
	var b strings.Builder
	for i := range 40000 {
		fmt.Fprintf(&b, "line %06d of a larger file\n", i)
	}
	data := b.String() // about 1.1 MB
	v := e.write("big/large.txt", data)
	got, rv, err := e.ws.ReadFile(e.ctx, "big/large.txt")
	if err != nil || string(got) != data || rv != v {
		t.Fatalf("large file round trip: %d bytes, err %v", len(got), err)
	}
	r, err := e.ws.ReadLines(e.ctx, "big/large.txt", 39998, 5)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "last lines", r.Lines, []string{"line 039998 of a larger file", "line 039999 of a larger file"})
	if r.TotalLines != 40000 || !r.EOF {
		t.Errorf("total %d eof %v", r.TotalLines, r.EOF)
	}
}

const (
	workers = 4
	perWork = 25
)

func testConcurrentCAS(t *testing.T, e *env) {
	e.write("counter", "0")
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for done := 0; done < perWork; {
				b, v, err := e.ws.ReadFile(e.ctx, "counter")
				if err != nil {
					errs <- err
					return
				}
				n, _ := strconv.Atoi(string(b))
				_, err = e.ws.WriteFileIfVersion(e.ctx, "counter", []byte(strconv.Itoa(n+1)), v)
				if errors.Is(err, workspace.ErrConflict) {
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				done++
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got, want := e.read("counter"), strconv.Itoa(workers*perWork); got != want {
		t.Fatalf("counter = %s after %s compare-and-swap increments: an update was lost", got, want)
	}
}

func testConcurrentAppends(t *testing.T, e *env) {
	// A large head makes each append slow to build and hash, which widens
	// the window in which a driver that is not atomic loses an append.
	head := strings.Repeat("#\n", 64<<10)
	e.write("log.txt", head)
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWork {
				if _, err := e.ws.AppendFile(e.ctx, "log.txt", fmt.Appendf(nil, "g%d-%d\n", g, i), ""); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := e.read("log.txt")
	if !strings.HasPrefix(got, head) {
		t.Fatal("concurrent appends damaged the start of the file")
	}
	lines := strings.Split(strings.TrimSuffix(got[len(head):], "\n"), "\n")
	if len(lines) != workers*perWork {
		t.Fatalf("%d lines after %d appends", len(lines), workers*perWork)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		if seen[l] {
			t.Errorf("line %q appended twice", l)
		}
		seen[l] = true
	}
}

func testConcurrentWritersAndWalkers(t *testing.T, e *env) {
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	stop := make(chan struct{})
	for g := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWork {
				p := fmt.Sprintf("w%d/f%02d", g, i)
				if _, err := e.ws.WriteFile(e.ctx, p, []byte(p)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	var readers sync.WaitGroup
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// js/wasm has no preemption: let the writers run.
				runtime.Gosched()
				err := e.ws.Walk(e.ctx, ".", func(p string, en workspace.Entry) error {
					if en.Kind != workspace.KindFile {
						return nil
					}
					b, _, err := e.ws.ReadFile(e.ctx, p)
					if err != nil {
						return err
					}
					if string(b) != p {
						return fmt.Errorf("%s holds %q", p, b)
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if got := len(e.walk(".")); got != workers*(perWork+1) {
		t.Fatalf("walk found %d entries; want %d", got, workers*(perWork+1))
	}
}

var fsFiles = []string{"a.txt", "dir/b.txt", "dir/sub/c.txt", "empty.txt", "emptydir/"}

func testFSTestFS(t *testing.T, e *env) {
	e.seed(fsFiles...)
	e.write("empty.txt", "")
	if err := fstest.TestFS(e.ws.FS(e.ctx), "a.txt", "dir/b.txt", "dir/sub/c.txt", "empty.txt", "emptydir"); err != nil {
		t.Fatal(err)
	}
}

func testFSReadFileCopies(t *testing.T, e *env) {
	e.write("a.txt", "abc")
	fsys := e.ws.FS(e.ctx)
	b, err := fs.ReadFile(fsys, "a.txt")
	if err != nil {
		t.Fatal(err)
	}
	b[0] = 'X'
	if got := e.read("a.txt"); got != "abc" {
		t.Fatalf("modifying the bytes from FS.ReadFile changed the file to %q", got)
	}
	b2, _ := fs.ReadFile(fsys, "a.txt")
	if string(b2) != "abc" {
		t.Fatalf("second FS.ReadFile = %q", b2)
	}
}

func testFSErrors(t *testing.T, e *env) {
	e.write("a.txt", "abc")
	e.mkdir("d")
	fsys := e.ws.FS(e.ctx)
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"Open missing", func() error { _, err := fsys.Open("missing"); return err }(), fs.ErrNotExist},
		{"Stat missing", func() error { _, err := fs.Stat(fsys, "d/missing"); return err }(), fs.ErrNotExist},
		{"ReadDir file", func() error { _, err := fs.ReadDir(fsys, "a.txt"); return err }(), workspace.ErrNotDir},
		{"ReadFile dir", func() error { _, err := fs.ReadFile(fsys, "d"); return err }(), workspace.ErrIsDir},
		{"Open dotdot", func() error { _, err := fsys.Open("../a.txt"); return err }(), fs.ErrInvalid},
		{"Open absolute", func() error { _, err := fsys.Open("/a.txt"); return err }(), fs.ErrInvalid},
		{"Open unclean", func() error { _, err := fsys.Open("./a.txt"); return err }(), fs.ErrInvalid},
		{"Open backslash", func() error { _, err := fsys.Open(`d\a.txt`); return err }(), fs.ErrNotExist},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantIs(t, c.name, c.err, c.want)
			var pe *fs.PathError
			if !errors.As(c.err, &pe) {
				t.Errorf("%s error %T is not an *fs.PathError", c.name, c.err)
			}
		})
	}
}

func testFSWalkDirAgrees(t *testing.T, e *env) {
	e.seed(walkTree...)
	var got []string
	err := fs.WalkDir(e.ws.FS(e.ctx), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		if d.IsDir() {
			p += "/"
		}
		got = append(got, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "fs.WalkDir vs Workspace.Walk", got, e.walk("."))
}

func testPutFile(t *testing.T, e *env) {
	if err := e.ws.PutFile(e.ctx, "p/a.txt", []byte("put")); err != nil {
		t.Fatal(err)
	}
	b, v, err := e.ws.ReadFile(e.ctx, "p/a.txt")
	if err != nil || string(b) != "put" || v != workspace.VersionOf([]byte("put")) {
		t.Errorf("after PutFile: %q %q %v", b, v, err)
	}
	if err := e.ws.PutFile(e.ctx, "p/a.txt", []byte("again")); err != nil {
		t.Fatal(err)
	}
	if e.read("p/a.txt") != "again" {
		t.Errorf("PutFile did not overwrite")
	}
	// A compare-and-swap against content whose version nobody asked for yet.
	if err := e.ws.PutFile(e.ctx, "p/b.txt", []byte("b1")); err != nil {
		t.Fatal(err)
	}
	_, err = e.ws.WriteFileIfVersion(e.ctx, "p/b.txt", []byte("b2"), workspace.VersionOf([]byte("stale")))
	wantIs(t, "stale CAS after PutFile", err, workspace.ErrConflict)
	if _, err := e.ws.WriteFileIfVersion(e.ctx, "p/b.txt", []byte("b2"), workspace.VersionOf([]byte("b1"))); err != nil {
		t.Errorf("matching CAS after PutFile: %v", err)
	}
	e.write("f", "f")
	before := e.snapshot()
	wantIs(t, "PutFile root", e.ws.PutFile(e.ctx, ".", []byte("x")), workspace.ErrIsDir)
	wantIs(t, "PutFile dir", e.ws.PutFile(e.ctx, "p", []byte("x")), workspace.ErrIsDir)
	wantIs(t, "PutFile under a file", e.ws.PutFile(e.ctx, "f/x", []byte("x")), workspace.ErrNotDir)
	wantIs(t, "PutFile escaping", e.ws.PutFile(e.ctx, "../x", []byte("x")), workspace.ErrPathEscape)
	e.unchanged(before, "refused PutFile")
}

// testConcurrentFirstVersion has many readers ask for the version of
// content stored by PutFile at the same moment (a driver hashing lazily
// must do it once, race-free), while CAS writers use those versions.
func testConcurrentFirstVersion(t *testing.T, e *env) {
	data := bytes.Repeat([]byte("lazy "), 20000)
	want := workspace.VersionOf(data)
	for i := range perWork {
		if err := e.ws.PutFile(e.ctx, fmt.Sprintf("lazy/%02d", i), data); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*workers)
	for g := range 2 * workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWork {
				p := fmt.Sprintf("lazy/%02d", (i+g)%perWork)
				_, v, err := e.ws.ReadFile(e.ctx, p)
				if err != nil {
					errs <- err
					return
				}
				if v != want {
					errs <- fmt.Errorf("%s: version %q; want %q", p, v, want)
					return
				}
				if g%2 == 0 && i%5 == 0 {
					_, err := e.ws.WriteFileIfVersion(e.ctx, p, data, v) // same bytes: version stays valid
					if err != nil {
						errs <- err
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
