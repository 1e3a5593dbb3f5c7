package workspacetest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
)

// extra is one optional driver interface and how the suite checks it.
type extra struct {
	name string
	has  func(workspace.Driver) bool
	// check compares, after a step, what ws (over the driver, taking the
	// extra) gives with what plain (over another driver of the same kind
	// holding the same tree, every extra hidden: the workspace's
	// fallbacks) gives. nil for the extras that change files: the steps
	// themselves go through them, and every step ends comparing the two
	// trees.
	check func(t *testing.T, ws, plain *workspace.Workspace)
}

var extras = []extra{
	{"LineReader", implements[workspace.LineReader], checkReadLines},
	{"Appender", implements[workspace.Appender], nil},
	{"Putter", implements[workspace.Putter], nil},
	{"Walker", implements[workspace.Walker], checkWalk},
	{"RunWalker", implements[workspace.RunWalker], checkWalkRuns},
	{"FileLister", implements[workspace.FileLister], checkFiles},
	{"DataReader", implements[workspace.DataReader], checkReadData},
}

func implements[I any](d workspace.Driver) bool {
	_, ok := d.(I)
	return ok
}

// plainDriver hides every optional extra of the driver it holds.
type plainDriver struct{ workspace.Driver }

// testExtra applies the same 150 (Harness.Steps) random changes (new files, overwrites,
// compare-and-swaps, appends, puts, removals, renames of files and
// directories, new directories; many refused) to the driver and to a
// second one with its extras hidden; after each, both must have answered
// alike, hold the same tree, and x.check must find the extra agreeing
// with the fallback. A driver without the extra has the fallback checked
// against the same expectations.
func testExtra(t *testing.T, e *env, x extra) {
	if !x.has(e.ws.Driver()) {
		t.Logf("%T has no %s: checking the workspace's fallback alone", e.ws.Driver(), x.name)
	}
	plain, err := workspace.New(plainDriver{e.h.New(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := e.ctx
	rng := rand.New(rand.NewPCG(5, 6))
	names := []string{"a", "b", "a.go", "a-b", "z", "b.txt"}
	randPath := func() string {
		p := names[rng.IntN(len(names))]
		for d := rng.IntN(3); d > 0; d-- {
			p = names[rng.IntN(len(names))] + "/" + p
		}
		return p
	}
	steps := e.h.Steps
	if steps <= 0 {
		steps = 150
	}
	for step := range steps {
		p, q := randPath(), randPath()
		data := fmt.Appendf(nil, "step %d\nline two\r\n%s", step, strings.Repeat("x", step%5))
		// A version to compare with: the current one, or a stale one.
		v := workspace.VersionOf([]byte("stale"))
		if _, cur, err := plain.ReadFile(ctx, p); err == nil && rng.IntN(3) > 0 {
			v = cur
		}
		var do func(ws *workspace.Workspace) (workspace.Version, error)
		var what string
		switch rng.IntN(8) {
		case 0:
			what, do = "write "+p, func(ws *workspace.Workspace) (workspace.Version, error) { return ws.WriteFile(ctx, p, data) }
		case 1:
			what, do = "compare-and-swap "+p, func(ws *workspace.Workspace) (workspace.Version, error) {
				return ws.WriteFileIfVersion(ctx, p, data, v)
			}
		case 2:
			what, do = "put "+p, func(ws *workspace.Workspace) (workspace.Version, error) { return "", ws.PutFile(ctx, p, data) }
		case 3:
			what, do = "append to "+p, func(ws *workspace.Workspace) (workspace.Version, error) { return ws.AppendFile(ctx, p, data, "") }
		case 4:
			what, do = "append if version to "+p, func(ws *workspace.Workspace) (workspace.Version, error) {
				return ws.AppendFile(ctx, p, data, v)
			}
		case 5:
			what, do = "mkdir "+p, func(ws *workspace.Workspace) (workspace.Version, error) { return "", ws.MkdirAll(ctx, p) }
		case 6:
			what, do = "remove "+p, func(ws *workspace.Workspace) (workspace.Version, error) { return "", ws.Remove(ctx, p) }
		case 7:
			what, do = "rename "+p+" to "+q, func(ws *workspace.Workspace) (workspace.Version, error) { return "", ws.Rename(ctx, p, q) }
		}
		gv, gerr := do(e.ws)
		wv, werr := do(plain)
		if gv != wv || errKind(gerr) != errKind(werr) {
			t.Fatalf("step %d, %s: %q, %v; with the fallbacks %q, %v", step, what, gv, gerr, wv, werr)
		}
		sameTree(t, e.ws, plain)
		if x.check != nil {
			x.check(t, e.ws, plain)
		}
		if t.Failed() {
			t.Fatalf("after step %d: %s", step, what)
		}
	}
}

// errKind names the workspace error an error is, for comparing outcomes.
func errKind(err error) string {
	if err == nil {
		return "ok"
	}
	for _, k := range []error{fs.ErrNotExist, fs.ErrExist, fs.ErrInvalid, workspace.ErrIsDir, workspace.ErrNotDir, workspace.ErrConflict, workspace.ErrPathEscape, context.Canceled} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return "other: " + err.Error()
}

// listTree lists every path with its kind, size and content through
// ReadDir and ReadFile alone, the calls no extra replaces.
func listTree(t *testing.T, ws *workspace.Workspace) (lines, dirs, files []string) {
	t.Helper()
	ctx := context.Background()
	var list func(dir string)
	list = func(dir string) {
		es, err := ws.ReadDir(ctx, dir)
		if err != nil {
			t.Fatalf("ReadDir(%q): %v", dir, err)
		}
		for _, en := range es {
			p := workspace.Join(dir, en.Name)
			if en.Kind == workspace.KindDir {
				lines, dirs = append(lines, p+"/"), append(dirs, p)
				list(p)
				continue
			}
			b, v, err := ws.ReadFile(ctx, p)
			if err != nil {
				t.Fatalf("ReadFile(%q): %v", p, err)
			}
			lines, files = append(lines, fmt.Sprintf("%s %d %q %s", p, en.Size, b, v)), append(files, p)
		}
	}
	list(".")
	return lines, dirs, files
}

func sameTree(t *testing.T, ws, plain *workspace.Workspace) {
	t.Helper()
	got, _, _ := listTree(t, ws)
	want, _, _ := listTree(t, plain)
	equal(t, "the tree", got, want)
}

// visits walks root with ws.Walk, returning fn at the entry at path at (if
// any), and lists what it visited.
func visits(ws *workspace.Workspace, root, at string, ret error) ([]string, error) {
	var out []string
	err := ws.Walk(context.Background(), root, func(p string, en workspace.Entry) error {
		out = append(out, fmt.Sprintf("%s %s %s %d", p, en.Name, en.Kind, en.Size))
		if p == at {
			return ret
		}
		return nil
	})
	return out, err
}

// walkCase is a walk of root whose callback returns ret at path at.
type walkCase struct {
	root, at string
	ret      error
}

// walkCases are the walks checkWalk and checkWalkRuns compare: the whole
// tree and every directory, and from the root with fs.SkipDir at each
// directory and fs.SkipAll at each file.
func walkCases(t *testing.T, plain *workspace.Workspace) []walkCase {
	_, dirs, files := listTree(t, plain)
	var cases []walkCase
	for _, d := range append([]string{"."}, dirs...) {
		cases = append(cases, walkCase{d, "", nil})
	}
	for _, d := range dirs {
		cases = append(cases, walkCase{".", d, fs.SkipDir})
	}
	for _, f := range files {
		cases = append(cases, walkCase{".", f, fs.SkipAll})
	}
	return cases
}

// checkWalk: the driver's Walk visits what the ReadDir walk visits, with
// the same entries, and honours SkipDir and SkipAll alike; each entry is
// what Stat says of its path (modification time included).
func checkWalk(t *testing.T, ws, plain *workspace.Workspace) {
	for _, c := range walkCases(t, plain) {
		got, gerr := visits(ws, c.root, c.at, c.ret)
		want, werr := visits(plain, c.root, c.at, c.ret)
		if !slices.Equal(got, want) || errKind(gerr) != errKind(werr) {
			t.Errorf("Walk(%q) returning %v at %q:\n%q, %v\nthe ReadDir walk:\n%q, %v", c.root, c.ret, c.at, got, gerr, want, werr)
		}
	}
	err := ws.Walk(context.Background(), ".", func(p string, en workspace.Entry) error {
		if st, err := ws.Stat(context.Background(), p); err != nil || !st.ModTime.Equal(en.ModTime) || st.Name != en.Name || st.Kind != en.Kind || st.Size != en.Size {
			t.Errorf("Walk gave %s %+v; Stat gives %+v, %v", p, en, st, err)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
}

// checkWalkRuns: WalkRuns hands over, in runs that keep their promises
// (one directory's entries, only the last may be a directory, paths pair
// with entries), what the ReadDir walk visits; fs.SkipDir from a run
// ending at a directory skips it and fs.SkipAll stops, as from Walk.
func checkWalkRuns(t *testing.T, ws, plain *workspace.Workspace) {
	for _, c := range walkCases(t, plain) {
		var got []string
		gerr := ws.WalkRuns(context.Background(), c.root, func(ps []string, es []workspace.Entry) error {
			if len(ps) != len(es) || len(es) == 0 {
				t.Fatalf("a run of %d paths and %d entries", len(ps), len(es))
			}
			for i, en := range es {
				if i < len(es)-1 && en.Kind == workspace.KindDir {
					t.Errorf("directory %s in the middle of the run %q", ps[i], ps)
				}
				if path.Base(ps[i]) != en.Name || path.Dir(ps[i]) != path.Dir(ps[0]) {
					t.Errorf("run %q: path %s for entry %s", ps, ps[i], en.Name)
				}
				got = append(got, fmt.Sprintf("%s %s %s %d", ps[i], en.Name, en.Kind, en.Size))
				if ps[i] == c.at {
					if i != len(es)-1 && c.ret == fs.SkipDir {
						t.Errorf("directory %s in the middle of the run %q", ps[i], ps)
					}
					return c.ret
				}
			}
			return nil
		})
		want, werr := visits(plain, c.root, c.at, c.ret)
		if !slices.Equal(got, want) || errKind(gerr) != errKind(werr) {
			t.Errorf("WalkRuns(%q) returning %v at %q:\n%q, %v\nthe ReadDir walk:\n%q, %v", c.root, c.ret, c.at, got, gerr, want, werr)
		}
	}
}

// checkFiles: Files of every directory, with the driver's list and with
// the fallback, is the files a walk of it visits, in order; errors agree.
func checkFiles(t *testing.T, ws, plain *workspace.Workspace) {
	ctx := context.Background()
	_, dirs, files := listTree(t, plain)
	for _, d := range append([]string{"."}, dirs...) {
		var want []string
		for _, f := range files {
			if d == "." || strings.HasPrefix(f, d+"/") {
				want = append(want, f)
			}
		}
		for name, w := range map[string]*workspace.Workspace{"the driver's": ws, "the fallback's": plain} {
			got, err := w.Files(ctx, d)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("%s Files(%q) = %q, %v; a walk visits %q", name, d, got, err, want)
			}
		}
	}
	odd := []string{"no/such/dir", "../x", "./"}
	if len(files) > 0 {
		odd = append(odd, files[0], files[0]+"/x")
	}
	for _, p := range odd {
		got, gerr := ws.Files(ctx, p)
		want, werr := plain.Files(ctx, p)
		if !slices.Equal(got, want) || errString(gerr) != errString(werr) {
			t.Errorf("Files(%q) = %q, %v; the fallback gives %q, %v", p, got, gerr, want, werr)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// readPaths are the paths read checks try: every file and directory,
// and spellings and mistakes around them.
func readPaths(t *testing.T, plain *workspace.Workspace) []string {
	_, dirs, files := listTree(t, plain)
	ps := append(append([]string{".", "missing", "../x", "a/", "./a//b"}, dirs...), files...)
	for _, f := range files {
		ps = append(ps, "./"+f, f+"/", f+"/x")
	}
	return ps
}

// checkReadData: ReadData gives ReadFile's bytes and ReadFile's errors
// for every path, and stops on a cancelled context.
func checkReadData(t *testing.T, ws, plain *workspace.Workspace) {
	ctx := context.Background()
	for _, p := range readPaths(t, plain) {
		got, gerr := ws.ReadData(ctx, p)
		want, _, werr := plain.ReadFile(ctx, p)
		if string(got) != string(want) || errString(gerr) != errString(werr) {
			t.Errorf("ReadData(%q) = %q, %v; ReadFile gives %q, %v", p, got, gerr, want, werr)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ws.ReadData(cancelled, "."); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadData with a cancelled context: %v", err)
	}
}

// checkReadLines: ReadLines of every file, over several ranges, is the
// fallback's (SliceLines of ReadFile); errors agree.
func checkReadLines(t *testing.T, ws, plain *workspace.Workspace) {
	ctx := context.Background()
	for _, p := range readPaths(t, plain) {
		for _, r := range [][2]int{{0, 0}, {0, 1}, {1, 1}, {1, 0}, {2, 5}, {9, 1}} {
			got, gerr := ws.ReadLines(ctx, p, r[0], r[1])
			want, werr := plain.ReadLines(ctx, p, r[0], r[1])
			if !slices.Equal(got.Lines, want.Lines) || got.Offset != want.Offset || got.TotalLines != want.TotalLines || got.EOF != want.EOF || errString(gerr) != errString(werr) {
				t.Errorf("ReadLines(%q, %d, %d) = %+v, %v; the fallback gives %+v, %v", p, r[0], r[1], got, gerr, want, werr)
			}
		}
	}
}
