package workspace_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
	"github.com/a3s-lab/code-wasm/workspace/memfs"
)

// walkerOnly hides memfs's RunWalker but keeps its Walker, so WalkRuns
// takes its one-entry-per-run path over a driver's Walk.
type walkerOnly struct{ *memfs.FS }

func (d walkerOnly) Walk(ctx context.Context, root string, fn workspace.WalkFunc) error {
	return d.FS.Walk(ctx, root, fn)
}

var runTree = []string{"a/b/c.txt", "a/b/d/e.txt", "a/z.txt", "a-b/x", "a.txt", "b.txt", "c/", "d/1", "d/2", "d/3/4", "d/5"}

func runDrivers() map[string]func() workspace.Driver {
	return map[string]func() workspace.Driver{
		"memfs (RunWalker)":    func() workspace.Driver { return memfs.New() },
		"Walker only":          func() workspace.Driver { return walkerOnly{memfs.New()} },
		"no Walker (fallback)": func() workspace.Driver { return plainDriver{memfs.New()} },
	}
}

func seedRunTree(t *testing.T, d workspace.Driver) *workspace.Workspace {
	t.Helper()
	ws, err := workspace.New(d)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range runTree {
		if p[len(p)-1] == '/' {
			err = ws.MkdirAll(ctx, p)
		} else {
			_, err = ws.WriteFile(ctx, p, []byte(p))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// TestWalkRunsIsWalk: WalkRuns gives Walk's entries in Walk's order, in
// runs that keep their promises (one directory's listing, only the last
// may be a directory, paths pair up with entries), over every kind of
// driver; SkipDir, SkipAll and errors do what the doc says.
func TestWalkRunsIsWalk(t *testing.T) {
	ctx := context.Background()
	stop := errors.New("stop here")
	cases := []struct {
		name string
		root string
		at   string // the run ending at this path returns ret
		ret  error
		want []string // nil: the same as Walk
		err  error
	}{
		{name: "whole tree", root: "."},
		{name: "below the root", root: "a"},
		{name: "empty directory", root: "c"},
		{name: "SkipDir at a directory skips its contents", root: ".", at: "a/b", ret: fs.SkipDir,
			want: []string{"a", "a/b", "a/z.txt", "a-b", "a-b/x", "a.txt", "b.txt", "c", "d", "d/1", "d/2", "d/3", "d/3/4", "d/5"}},
		{name: "wrapped SkipDir at a directory", root: ".", at: "d/3", ret: fmt.Errorf("wrapped: %w", fs.SkipDir),
			want: []string{"a", "a/b", "a/b/c.txt", "a/b/d", "a/b/d/e.txt", "a/z.txt", "a-b", "a-b/x", "a.txt", "b.txt", "c", "d", "d/1", "d/2", "d/3", "d/5"}},
		{name: "SkipDir at a file skips nothing", root: ".", at: "a/z.txt", ret: fs.SkipDir},
		{name: "SkipAll stops without an error", root: ".", at: "a/b", ret: fs.SkipAll, want: []string{"a", "a/b"}},
		{name: "an error stops the walk", root: ".", at: "a-b", ret: stop, want: []string{"a", "a/b", "a/b/c.txt", "a/b/d", "a/b/d/e.txt", "a/z.txt", "a-b"}, err: stop},
	}
	for dname, newDriver := range runDrivers() {
		for _, c := range cases {
			t.Run(dname+"/"+c.name, func(t *testing.T) {
				ws := seedRunTree(t, newDriver())
				var walked []string
				if err := ws.Walk(ctx, c.root, func(p string, e workspace.Entry) error {
					walked = append(walked, p+" "+string(e.Kind)+" "+e.Name)
					return nil
				}); err != nil {
					t.Fatal(err)
				}
				var got, gotFull []string
				err := ws.WalkRuns(ctx, c.root, func(ps []string, es []workspace.Entry) error {
					if len(ps) != len(es) || len(es) == 0 {
						t.Fatalf("run of %d paths and %d entries", len(ps), len(es))
					}
					for i, e := range es {
						if i < len(es)-1 && e.Kind == workspace.KindDir {
							t.Errorf("directory %s in the middle of a run %q", ps[i], ps)
						}
						if path.Base(ps[i]) != e.Name || path.Dir(ps[i]) != path.Dir(ps[0]) {
							t.Errorf("run %q: path %s for entry %s", ps, ps[i], e.Name)
						}
						got = append(got, ps[i])
						gotFull = append(gotFull, ps[i]+" "+string(e.Kind)+" "+e.Name)
					}
					if ps[len(ps)-1] == c.at {
						return c.ret
					}
					return nil
				})
				if c.err == nil && err != nil || c.err != nil && !errors.Is(err, c.err) {
					t.Errorf("WalkRuns error %v; want %v", err, c.err)
				}
				if c.want == nil {
					if !slices.Equal(gotFull, walked) {
						t.Errorf("WalkRuns gave\n%q\nWalk gives\n%q", gotFull, walked)
					}
					return
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("WalkRuns visited\n%q\nwant\n%q", got, c.want)
				}
			})
		}
	}
}

func TestWalkRunsErrors(t *testing.T) {
	for dname, newDriver := range runDrivers() {
		t.Run(dname, func(t *testing.T) {
			ws := seedRunTree(t, newDriver())
			none := func([]string, []workspace.Entry) error { return nil }
			ctx, cancel := context.WithCancel(context.Background())
			cases := []struct {
				name string
				root string
				ctx  context.Context
				fn   workspace.WalkRunFunc
				want error
			}{
				{"missing root", "nope", context.Background(), none, fs.ErrNotExist},
				{"file root", "a.txt", context.Background(), none, workspace.ErrNotDir},
				{"escaping root", "../x", context.Background(), none, workspace.ErrPathEscape},
				{"cancelled midway", ".", ctx, func(ps []string, _ []workspace.Entry) error {
					if slices.Contains(ps, "a/b") {
						cancel()
					}
					return nil
				}, context.Canceled},
			}
			for _, c := range cases {
				if err := ws.WalkRuns(c.ctx, c.root, c.fn); !errors.Is(err, c.want) {
					t.Errorf("%s: WalkRuns error %v; want %v", c.name, err, c.want)
				}
			}
		})
	}
}
