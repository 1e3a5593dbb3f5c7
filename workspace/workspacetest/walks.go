package workspacetest

import (
	"fmt"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/a3s-lab/code-wasm/workspace"
)

type visit struct {
	path string
	e    workspace.Entry
}

func (e *env) visits(ws *workspace.Workspace, root string) []visit {
	e.t.Helper()
	var out []visit
	if err := ws.Walk(e.ctx, root, func(p string, en workspace.Entry) error {
		out = append(out, visit{p, en})
		return nil
	}); err != nil {
		e.t.Fatalf("Walk(%s): %v", root, err)
	}
	return out
}

// testWalkAfterEveryChange: a driver may cache listings (memfs and opfs
// keep each directory's, with its children's paths). After every kind of
// change, a walk over warm caches must agree with a walk of an identical
// workspace that was never walked (same paths, names, kinds, sizes), and
// each entry must equal what Stat says of its path now (ModTime included).
func testWalkAfterEveryChange(t *testing.T, e *env) {
	seed := []string{"a/b/c.txt", "a/b/d/e.txt", "a/z.txt", "a-b/x", "a.txt", "go/src/x.go", "go.mod", "m/n/o/p/q.txt"}
	cases := []struct {
		name string
		op   func(ws *workspace.Workspace) error
	}{
		{"write a new file", func(ws *workspace.Workspace) error {
			_, err := ws.WriteFile(e.ctx, "a/b/new.txt", []byte("n"))
			return err
		}},
		{"overwrite with another size", func(ws *workspace.Workspace) error {
			_, err := ws.WriteFile(e.ctx, "a/b/c.txt", []byte("longer content"))
			return err
		}},
		{"put a file in new directories", func(ws *workspace.Workspace) error { return ws.PutFile(e.ctx, "new/dir/f.go", []byte("x")) }},
		{"append", func(ws *workspace.Workspace) error {
			_, err := ws.AppendFile(e.ctx, "a/z.txt", []byte("more"), "")
			return err
		}},
		{"mkdir", func(ws *workspace.Workspace) error { return ws.MkdirAll(e.ctx, "a/b/d/deeper/still") }},
		{"remove a file", func(ws *workspace.Workspace) error { return ws.Remove(e.ctx, "a/b/d/e.txt") }},
		{"remove a directory", func(ws *workspace.Workspace) error { return ws.Remove(e.ctx, "a/b") }},
		{"rename a file", func(ws *workspace.Workspace) error { return ws.Rename(e.ctx, "a.txt", "a/b/d/a.txt") }},
		{"rename a deep directory", func(ws *workspace.Workspace) error { return ws.Rename(e.ctx, "m/n", "m2") }},
		{"rename a directory to another parent", func(ws *workspace.Workspace) error { return ws.Rename(e.ctx, "a/b", "go/src/b") }},
		{"rename a directory onto a name used before", func(ws *workspace.Workspace) error {
			if err := ws.Rename(e.ctx, "a", "tmp"); err != nil {
				return err
			}
			return ws.Rename(e.ctx, "tmp/b", "a")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			warm, cold := e.fresh(), e.fresh()
			for _, p := range seed {
				for _, ws := range []*workspace.Workspace{warm, cold} {
					if _, err := ws.WriteFile(e.ctx, p, []byte("content of "+p)); err != nil {
						t.Fatal(err)
					}
				}
			}
			e.visits(warm, ".") // fill every directory's cache
			if _, err := warm.Files(e.ctx, "."); err != nil {
				t.Fatal(err)
			}
			for _, ws := range []*workspace.Workspace{warm, cold} {
				if err := c.op(ws); err != nil {
					t.Fatal(err)
				}
			}
			got, want := e.visits(warm, "."), e.visits(cold, ".")
			strip := func(vs []visit) []string {
				var out []string
				for _, v := range vs {
					out = append(out, fmt.Sprintf("%s %s %s %d", v.path, v.e.Name, v.e.Kind, v.e.Size))
				}
				return out
			}
			if g, w := strip(got), strip(want); !slices.Equal(g, w) {
				t.Errorf("walk over warm caches:\n%s\nwant (never walked):\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
			}
			for _, v := range got {
				st, err := warm.Stat(e.ctx, v.path)
				if err != nil || st.Name != v.e.Name || st.Kind != v.e.Kind || st.Size != v.e.Size || !st.ModTime.Equal(v.e.ModTime) {
					t.Errorf("walk gave %s %+v; Stat gives %+v, %v", v.path, v.e, st, err)
				}
			}
			gf, _ := warm.Files(e.ctx, ".")
			wf, _ := cold.Files(e.ctx, ".")
			equal(t, "Files over a warm list", gf, wf)
			// A caller changing what ReadDir returned must not change what
			// the driver holds.
			es, err := warm.ReadDir(e.ctx, ".")
			if err != nil {
				t.Fatal(err)
			}
			for i := range es {
				es[i].Name = "changed"
			}
			if again, _ := warm.ReadDir(e.ctx, "."); len(again) > 0 && again[0].Name == "changed" {
				t.Error("ReadDir returned the driver's own slice")
			}
		})
	}
}

// testWalkIntoChangedDirectory: a driver's walk may hold each directory
// from the parent's listing; when the callback for a directory moves,
// removes or replaces it before the walk enters it, the walk must list
// what is at that path now (nothing, or the new directory), never the old
// directory's children under their old paths.
func testWalkIntoChangedDirectory(t *testing.T, e *env) {
	cases := []struct {
		name string
		at   string
		op   func(ws *workspace.Workspace) error
		want []string
	}{
		{"moved away", "a", func(ws *workspace.Workspace) error { return ws.Rename(e.ctx, "a", "z") },
			[]string{"a", "b.txt"}},
		{"removed", "a", func(ws *workspace.Workspace) error { return ws.Remove(e.ctx, "a") },
			[]string{"a", "b.txt"}},
		{"replaced by another directory", "a", func(ws *workspace.Workspace) error {
			if err := ws.Rename(e.ctx, "a", "z"); err != nil {
				return err
			}
			_, err := ws.WriteFile(e.ctx, "a/new.txt", []byte("n"))
			return err
		}, []string{"a", "a/new.txt", "b.txt"}},
		{"replaced by a file", "a", func(ws *workspace.Workspace) error {
			if err := ws.Remove(e.ctx, "a"); err != nil {
				return err
			}
			_, err := ws.WriteFile(e.ctx, "a", []byte("now a file"))
			return err
		}, []string{"a", "b.txt"}},
		{"parent moved", "a/c", func(ws *workspace.Workspace) error { return ws.Rename(e.ctx, "a", "z") },
			[]string{"a", "a/c", "a/e.txt", "b.txt"}}, // a/e.txt: a was listed before the move
		{"sibling moved onto it", "a", func(ws *workspace.Workspace) error {
			if err := ws.Remove(e.ctx, "a"); err != nil {
				return err
			}
			return ws.Rename(e.ctx, "y", "a")
		}, []string{"a", "a/moved.txt", "b.txt"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ws := e.fresh()
			for _, p := range []string{"a/c/d.txt", "a/e.txt", "b.txt", "y/moved.txt"} {
				if _, err := ws.WriteFile(e.ctx, p, []byte(p)); err != nil {
					t.Fatal(err)
				}
			}
			e.visits(ws, ".") // warm the caches
			var got []string
			err := ws.Walk(e.ctx, ".", func(p string, _ workspace.Entry) error {
				if strings.HasPrefix(p, "y") || strings.HasPrefix(p, "z") {
					return nil
				}
				got = append(got, p)
				if p == c.at {
					return c.op(ws)
				}
				return nil
			})
			if err != nil || !slices.Equal(got, c.want) {
				t.Errorf("walk visited %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// testWalkWhileRenaming runs walkers over warm caches while a writer moves
// a directory back and forth and adds files: every path a walk gives must
// end with the entry's name and lie in the directory the walk reached it
// from (a stale cached path would not), and, run with -race, no access may
// race.
func testWalkWhileRenaming(t *testing.T, e *env) {
	for i := range 20 {
		e.write(fmt.Sprintf("p/q/r/f%02d.txt", i), "x")
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the writer
		defer wg.Done()
		defer close(stop)
		names := []string{"p", "p2"}
		for i := range 200 {
			from, to := names[i%2], names[(i+1)%2]
			if err := e.ws.Rename(e.ctx, from, to); err != nil {
				errs <- err
				return
			}
			if _, err := e.ws.WriteFile(e.ctx, fmt.Sprintf("%s/q/w%03d.txt", to, i), []byte("y")); err != nil {
				errs <- err
				return
			}
			runtime.Gosched() // js/wasm has no preemption: let the walkers run
		}
	}()
	for _, runs := range []bool{false, true} { // one walker per entry, one in runs
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				dirs := map[string]bool{".": true}
				visit := func(p string, en workspace.Entry) error {
					if path.Base(p) != en.Name || !dirs[path.Dir(p)] {
						return fmt.Errorf("walk (runs %v) gave path %q for entry %q (directories reached: %v)", runs, p, en.Name, dirs)
					}
					if en.Kind == workspace.KindDir {
						dirs[p] = true
					}
					return nil
				}
				var err error
				if runs {
					err = e.ws.WalkRuns(e.ctx, ".", func(ps []string, es []workspace.Entry) error {
						for i := range es {
							if err := visit(ps[i], es[i]); err != nil {
								return err
							}
						}
						return nil
					})
				} else {
					err = e.ws.Walk(e.ctx, ".", visit)
				}
				if err != nil {
					errs <- err
					return
				}
				runtime.Gosched()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
